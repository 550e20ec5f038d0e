package httpapi_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/apisuite"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// frontDoor starts a fresh registry behind one of the API's two HTTP front
// doors on loopback.
type frontDoor struct {
	name  string
	start apisuite.Starter
}

var frontDoors = []frontDoor{
	{"net/http", func(t *testing.T, cfg registry.Config, api httpapi.APIConfig) (string, *registry.Store) {
		s := registry.New(cfg)
		srv := httptest.NewServer(httpapi.NewHTTPHandler(httpapi.NewAPI(s, api)))
		t.Cleanup(srv.Close)
		return srv.URL, s
	}},
	{"fasthttp", func(t *testing.T, cfg registry.Config, api httpapi.APIConfig) (string, *registry.Store) {
		s := registry.New(cfg)
		srv := httpapi.NewServer(httpapi.NewAPI(s, api), httpapi.ServerConfig{Addr: "127.0.0.1:0"})
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		testkit.StopOnCleanupChecked(t, 5*time.Second, srv.Stop)
		return "http://" + srv.Addr().String(), s
	}},
}
