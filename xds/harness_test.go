package xds_test

import (
	"net/http"
	"testing"

	"google.golang.org/grpc"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/internal/xdstest"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/xds"
)

// env is a registry served over Eureka's REST API on loopback and over
// xDS from the same Store.
type env struct {
	store *registry.Store
	api   string // the REST API's base URL, .../eureka
	xds   *xds.Server
}

func newEnv(t *testing.T, cfg xds.Config) *env {
	t.Helper()
	store, api := xdstest.Registry(t)
	return &env{store: store, api: api, xds: xdstest.Serve(t, store, cfg)}
}

// register registers app's instance id through the REST API, with the
// backend's port as its gRPC_port metadata.
func (e *env) register(t *testing.T, app, id string, grpcPort int, md map[string]string) {
	t.Helper()
	xdstest.Register(t, e.api, app, id, grpcPort, md)
}

// send sends a request with method to the REST API and wants want.
func (e *env) send(t *testing.T, method, path string, want int) {
	t.Helper()
	req, err := http.NewRequest(method, e.api+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := testkit.Do(t, http.DefaultClient, req); resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, body, want)
	}
}

// conn dials target through grpc-go's own xDS resolver, bootstrapped to
// e's server over plaintext.
func (e *env) conn(t *testing.T, target string) *grpc.ClientConn {
	t.Helper()
	return xdstest.Conn(t, xdstest.Bootstrap(e.xds.Addr().String(), `{"type":"insecure"}`, t.Name()), target)
}
