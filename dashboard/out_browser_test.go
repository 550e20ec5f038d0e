package dashboard

import (
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/dashboardsuite"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// The fasthttp gateway's balancer, through Config.Health: an instance it
// ejects is marked on the page and in the JSON, and unmarked when it
// answers again (dashboardsuite.OutOfRotation). Its traffic panel at
// 1280 px is the docs' picture of the panel
// (EUREKAGATE_DOCS_IMAGES=1 writes docs/images/dashboard-traffic.png).
func TestDashboardOutOfRotationFasthttp(t *testing.T) {
	store := registry.New(registry.Config{})
	rec := traffic.New()
	g, gw := startGateway(t, routing.Config{Instances: store, FailDuration: time.Second}, rec)
	d := New(store, Config{Version: "test", Traffic: rec, Health: g.Router().Config().Balancer})
	d.Start()
	t.Cleanup(d.Close)
	addr := serveDashboard(t, store, httpapi.AuthConfig{}, d)
	dashboardsuite.OutOfRotation(t, dashboardsuite.Setup{
		Dashboard: "http://" + addr + "/", Registry: "http://" + addr + "/eureka/",
		Gateway: "http://" + gw.Addr().String(), Repo: "..", Name: "fasthttp",
		DocsImage: "docs/images/dashboard-traffic.png",
	})
}
