package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/eurekagate/eurekagate/internal/version"
	"github.com/eurekagate/eurekagate/registry"
)

// GET /eureka/status reports the module's version among its general stats.
func TestStatusReportsVersion(t *testing.T) {
	api := NewAPI(registry.New(registry.Config{}), APIConfig{})
	var resp Response
	api.Serve(&Request{Method: http.MethodGet, Path: "/eureka/status", Accept: "application/json", Query: urlArgs{}}, &resp)
	var info StatusInfo
	if err := json.Unmarshal(resp.Body, &info); err != nil {
		t.Fatal(err)
	}
	if v := info.GeneralStats["version"]; v == "" || v != version.String() {
		t.Errorf("version %q, want %q", v, version.String())
	}
}
