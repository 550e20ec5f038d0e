package fxmodules

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/eurekagate/eurekagate/dashboard"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/routing"
)

// writeRulesFile writes a rules document sending every request for ORDERS
// to version v, replacing the file by a rename as an operator would.
func writeRulesFile(t *testing.T, path, v string) {
	t.Helper()
	doc := "apps:\n  orders:\n    default: {version: \"" + v + "\"}\n"
	if err := os.WriteFile(path+".tmp", []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// versionBackend is an instance of ORDERS of version v (in its
// metadata), whose backend answers with its version in X-Version.
func versionBackend(t *testing.T, v string) *eureka.InstanceInfo {
	t.Helper()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Version", v) }))
	t.Cleanup(backend.Close)
	return &eureka.InstanceInfo{InstanceID: "orders-" + v, HasInstanceID: true, HostName: "127.0.0.1", App: "ORDERS", IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: backend.Listener.Addr().(*net.TCPAddr).Port, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}, Metadata: map[string]string{"version": v}}
}

// routedTo sends a request for ORDERS through the gateway at base and
// returns the version of the instance that answered it.
func routedTo(t *testing.T, base string) string {
	t.Helper()
	resp, err := gatewayClient.Get(base + "/orders/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /orders/x: %d", resp.StatusCode)
	}
	return resp.Header.Get("X-Version")
}

// With GatewayRules, the gateway routes by the file's rules from the
// start, and by the new ones once the file is replaced; the dashboard
// shows the rules in force, and /metrics counts the requests per subset.
func TestGatewayRulesFile(t *testing.T) {
	defer http.DefaultClient.CloseIdleConnections()
	path := filepath.Join(t.TempDir(), "rules.yaml")
	writeRulesFile(t, path, "2.0")
	var store *registry.Store
	var srv *gateway.Server
	var g *gateway.Gateway
	var reg *httpapi.Server
	app := fxtest.New(t, Registry, LocalInstances, Gateway, Server, Metrics, Dashboard,
		fx.Supply(GatewayRules{File: path, Interval: 10 * time.Millisecond}),
		fx.Supply(gateway.ServerConfig{Addr: "127.0.0.1:0"}, httpapi.ServerConfig{Addr: "127.0.0.1:0"}),
		fx.Populate(&store, &srv, &g, &reg))
	app.RequireStart()
	defer app.RequireStop()
	for _, v := range []string{"2.0", "2.1"} {
		if err := store.Register(versionBackend(t, v), false); err != nil {
			t.Fatal(err)
		}
	}
	base := "http://" + srv.Addr().String()
	for range 4 {
		if v := routedTo(t, base); v != "2.0" {
			t.Fatalf("routed to %q by the first rules, want 2.0", v)
		}
	}
	writeRulesFile(t, path, "2.1")
	testkit.Eventually(t, 5*time.Second, "the new rules to route to 2.1", func() bool { return routedTo(t, base) == "2.1" })
	if doc, _ := g.Router().Rules().App("ORDERS"); doc.Default != "version=2.1" || g.Router().Rules().Source() != path {
		t.Errorf("the router's rules: %+v from %q", doc, g.Router().Rules().Source())
	}
	var view dashboard.RulesView
	status, body := testkit.HTTPGet(t, "http://"+reg.Addr().String()+"/api/rules")
	if err := json.Unmarshal([]byte(body), &view); status != 200 || err != nil || !view.Configured || view.Source != path ||
		len(view.Apps) != 1 || view.Apps[0].Rules.Default != "version=2.1" {
		t.Errorf("the dashboard's rules: %d %v %s", status, err, body)
	}
	status, body = testkit.HTTPGet(t, "http://"+reg.Addr().String()+"/metrics")
	if status != 200 || !strings.Contains(body, `eureka_gateway_requests_total{app="ORDERS",code="2xx",method="GET",subset="version=2.0"} `) ||
		!strings.Contains(body, "eureka_gateway_requests_total{app=\"ORDERS\",code=\"2xx\",method=\"GET\",subset=\"version=2.1\"} 1\n") {
		t.Errorf("/metrics: %d, no request counts per subset in\n%s", status, body)
	}
}

// A rules file that does not parse, or is past a limit, fails the
// application with its file, line and reason.
func TestGatewayRulesBadFileFailsStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte("apps:\n  orders:\n    fallback: sometimes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	app := fx.New(Registry, LocalInstances, Gateway, fx.NopLogger,
		fx.Supply(GatewayRules{File: path}, gateway.ServerConfig{Addr: "127.0.0.1:0"}))
	err := app.Err()
	var re *routing.RulesError
	if !errors.As(err, &re) || re.Error() != path+`:3: apps.orders.fallback: "sometimes" is not default, any or none` {
		t.Fatalf("%v, want the RulesError of %s:3", err, path)
	}
	// Past a limit of GatewayRules.Limits, it fails the start too.
	writeRulesFile(t, path, "2.0")
	app = fx.New(Registry, LocalInstances, Gateway, fx.NopLogger,
		fx.Supply(GatewayRules{File: path, Limits: routing.RulesLimits{MaxBytes: 10}}, gateway.ServerConfig{Addr: "127.0.0.1:0"}))
	if !errors.As(app.Err(), &re) || re.Error() != path+":2: the document is larger than 10 bytes, the limit on a rules document's size" {
		t.Fatalf("%v, want the RulesError of the limit", app.Err())
	}
}

// The gateway counts its requests in the application's registry, beside
// the Metrics module's collector, under its namespace; the dashboard
// reads the gateway's rules, and a dashboard without a gateway none.
func TestGatewayMetricsAndDashboardRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	writeRulesFile(t, path, "2.0")
	reg := prometheus.NewRegistry()
	var store *registry.Store
	var srv *gateway.Server
	var g *gateway.Gateway
	app := fxtest.New(t, Registry, LocalInstances, Gateway, Metrics,
		fx.Supply(reg, GatewayRules{File: path}, MetricsConfig{Namespace: "reg"}, gateway.ServerConfig{Addr: "127.0.0.1:0"}),
		fx.Populate(&store, &srv, &g))
	app.RequireStart()
	defer app.RequireStop()
	if err := store.Register(versionBackend(t, "2.0"), false); err != nil {
		t.Fatal(err)
	}
	if v := routedTo(t, "http://"+srv.Addr().String()); v != "2.0" {
		t.Fatalf("routed to %q, want 2.0", v)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	if !names["reg_renew_threshold"] || !names["reg_gateway_requests_total"] {
		t.Errorf("the registry's metrics: %v, want the Metrics module's and the gateway's", names)
	}

	cfg := dashboardConfig(DashboardParams{Gateway: g})
	if cfg.Rules == nil || cfg.Rules() != g.Router().Rules() || cfg.Rules() == nil || cfg.Path != "/" {
		t.Errorf("the dashboard does not read the gateway's rules: %+v", cfg)
	}
	if cfg := dashboardConfig(DashboardParams{}); cfg.Rules != nil {
		t.Error("rules for a dashboard without a gateway")
	}
}
