package fxmodules

import (
	"net/http"
	"strings"
	"testing"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/eurekagate/eurekagate/dashboard"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// Registry + Server + Dashboard + Metrics: the dashboard and /metrics are
// served on the registry's listener next to the API, and the dashboard's
// sampler stops with the application (TestMain checks for goroutines).
func TestDashboardAndMetricsModules(t *testing.T) {
	defer http.DefaultClient.CloseIdleConnections()
	var srv *httpapi.Server
	app := fxtest.New(t, Registry, Server, Dashboard, Metrics,
		fx.Supply(httpapi.ServerConfig{Addr: "127.0.0.1:0"}, dashboard.Config{Path: "/ui"}),
		fx.Populate(&srv))
	app.RequireStart()
	defer app.RequireStop()
	base := "http://" + srv.Addr().String()
	if status, body := testkit.HTTPGet(t, base+"/ui/"); status != 200 || !strings.Contains(body, "<html") {
		t.Errorf("dashboard: %d %.80q", status, body)
	}
	if status, body := testkit.HTTPGet(t, base+"/ui/api/summary"); status != 200 || !strings.Contains(body, `"self_preservation"`) {
		t.Errorf("dashboard data: %d %.80q", status, body)
	}
	if status, body := testkit.HTTPGet(t, base+"/metrics"); status != 200 || !strings.Contains(body, "eureka_renew_threshold") || !strings.Contains(body, "go_goroutines") {
		t.Errorf("metrics: %d %.200q", status, body)
	}
	if status, _ := testkit.HTTPGet(t, base+"/eureka/apps"); status != 200 {
		t.Errorf("the API: %d", status)
	}
}
