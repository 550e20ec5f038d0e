package fxmodules

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/routing"
)

// gatewayClient is the tests' client of the gateway: bounded, and without
// keep-alive, so that no connection outlives a test.
var gatewayClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// gatewayGet sends a GET for url through the gateway and returns the
// status and the body.
func gatewayGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, body := testkit.Do(t, gatewayClient, testkit.JSONRequest(t, "GET", url, ""))
	return resp.StatusCode, body
}

func backendInstance(t *testing.T, app string) *eureka.InstanceInfo {
	t.Helper()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "backend "+r.URL.Path) }))
	t.Cleanup(backend.Close)
	return &eureka.InstanceInfo{InstanceID: "b", HasInstanceID: true, HostName: "127.0.0.1", App: app, IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: backend.Listener.Addr().(*net.TCPAddr).Port, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}}
}

// Registry and gateway in one application: the gateway routes by the
// embedded Store.
func TestGatewayWithLocalRegistry(t *testing.T) {
	var store *registry.Store
	var srv *gateway.Server
	app := fxtest.New(t, Registry, LocalInstances, Gateway,
		fx.Supply(gateway.ServerConfig{Addr: "127.0.0.1:0"}), fx.Populate(&store, &srv))
	app.RequireStart()
	defer app.RequireStop()
	if err := store.Register(backendInstance(t, "ORDERS"), false); err != nil {
		t.Fatal(err)
	}
	if status, body := gatewayGet(t, "http://"+srv.Addr().String()+"/orders/items/7"); status != 200 || body != "backend /items/7" {
		t.Fatalf("%d %q", status, body)
	}
}

// A gateway in another application routes by a remote registry, through
// the discovery client, with a supplied gateway.Config.
func TestGatewayWithRemoteRegistry(t *testing.T) {
	var regSrv *httpapi.Server
	var store *registry.Store
	reg := fxtest.New(t, Registry, Server, fx.Supply(httpapi.ServerConfig{Addr: "127.0.0.1:0"}), fx.Populate(&regSrv, &store))
	reg.RequireStart()
	defer reg.RequireStop()
	if err := store.Register(backendInstance(t, "ORDERS"), false); err != nil {
		t.Fatal(err)
	}

	var srv *gateway.Server
	gw := fxtest.New(t, Discovery, RemoteInstances, Gateway,
		fx.Supply(discovery.Config{
			ServiceURLs:           []string{"http://" + regSrv.Addr().String() + "/eureka/"},
			RegistryFetchInterval: 50 * time.Millisecond,
		}),
		fx.Supply(gateway.Config{Routing: routing.Config{Retries: 2}}, gateway.ServerConfig{Addr: "127.0.0.1:0"}),
		fx.Populate(&srv))
	gw.RequireStart()
	defer gw.RequireStop()
	base := "http://" + srv.Addr().String()
	testkit.Eventually(t, 5*time.Second, "the gateway to route by the remote registry", func() bool {
		status, _ := gatewayGet(t, base+"/orders/x")
		return status == 200
	})
	if status, body := gatewayGet(t, base+"/orders/items/7"); status != 200 || body != "backend /items/7" {
		t.Fatalf("%d %q", status, body)
	}
}

// With the Balancer module and its health checks, the gateway routes by
// them: an application whose instances all fail theirs is answered 503.
func TestGatewayUsesTheBalancersHealthChecks(t *testing.T) {
	var store *registry.Store
	var srv *gateway.Server
	app := fxtest.New(t, Registry, LocalInstances, Balancer, Gateway,
		fx.Supply(&balancer.CheckConfig{Interval: 50 * time.Millisecond}),
		fx.Supply(gateway.ServerConfig{Addr: "127.0.0.1:0"}), fx.Populate(&store, &srv))
	app.RequireStart()
	defer app.RequireStop()
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer sick.Close()
	inst := backendInstance(t, "SICK")
	inst.HealthCheckURL = sick.URL + "/health"
	if err := store.Register(inst, false); err != nil {
		t.Fatal(err)
	}
	url := "http://" + srv.Addr().String() + "/sick/x"
	testkit.Eventually(t, 5*time.Second, "the failing health check to take the instance out", func() bool {
		status, body := gatewayGet(t, url)
		return status == 503 && body == "application \"sick\" has no instance passing its health check\n"
	})
}

// A gateway whose address is taken fails the application's start.
func TestGatewayBindErrorFailsStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	app := fx.New(Registry, LocalInstances, Gateway, fx.Supply(gateway.ServerConfig{Addr: ln.Addr().String()}), fx.NopLogger)
	if err := app.Start(t.Context()); err == nil {
		app.Stop(t.Context())
		t.Fatal("a gateway on a taken address started")
	}
}
