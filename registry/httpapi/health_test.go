package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/eurekagate/eurekagate/registry"
)

// /health answers 200 only once the node serves reads (after its start-up
// sync) and until it shuts down, without credentials, through both front
// doors.
func TestHealth(t *testing.T) {
	ready := make(chan struct{})
	hash, err := HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	api := NewAPI(registry.New(registry.Config{}), APIConfig{Ready: ready,
		Auth: AuthConfig{Users: []Account{{Username: "ops", PasswordHash: hash}}, RequireForReads: true}})
	nethttp := httptest.NewServer(NewHTTPHandler(api))
	defer nethttp.Close()
	fast := NewServer(api, ServerConfig{Addr: "127.0.0.1:0"})
	if err := fast.Start(); err != nil {
		t.Fatal(err)
	}
	defer fast.Stop(context.Background())
	defer http.DefaultClient.CloseIdleConnections()

	check := func(when string, method string, want int, wantBody string) {
		t.Helper()
		for _, base := range []string{nethttp.URL, "http://" + fast.Addr().String()} {
			req, _ := http.NewRequest(method, base+"/health", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want || (wantBody != "" && string(b) != wantBody) {
				t.Errorf("%s: %s %s/health: %d %q, want %d %q", when, method, base, resp.StatusCode, b, want, wantBody)
			}
		}
	}
	if !api.Match("/health") || api.Match("/healthz") {
		t.Error("Match does not claim exactly /health")
	}
	check("syncing", "GET", 503, `{"status":"DOWN","reason":"syncing from its peers"}`)
	close(ready)
	check("ready", "GET", 200, `{"status":"UP"}`)
	check("ready", "HEAD", 200, "")
	check("ready", "POST", 405, "")
	api.Close()
	check("shutting down", "GET", 503, `{"status":"DOWN","reason":"shutting down"}`)
}
