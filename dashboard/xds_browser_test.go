package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// The xDS clients block: one row per client with its node id, the types
// it asked for, its stream and how long it has been connected (a node id
// with markup stays text); a node without xDS has no block.
func TestDashboardXDSClients(t *testing.T) {
	clients := []XDSClient{
		{Node: "edge-1", Types: []string{"cluster", "endpoints", "route"}, Since: time.Now().Add(-3 * time.Minute), Delta: true},
		{Node: "<b>grpc</b>", Types: []string{"listener", "cluster", "endpoints"}, Since: time.Now().Add(-5 * time.Second)},
	}
	addr, store := startRegistryDashboard(t, httpapi.AuthConfig{}, registry.Config{}, Config{Version: "test", XDS: func() []XDSClient { return clients }})
	register(t, store, "ORDERS", "orders-1")

	p := page{t, browser(t, 1280)}
	p.do(chromedp.Navigate("http://"+addr+"/"), visible(row("orders-1")), visible(`#xds tr[data-node="edge-1"]`))
	if edge := p.text(`#xds tr[data-node="edge-1"]`); !strings.Contains(edge, "cluster, endpoints, route") || !strings.Contains(edge, "delta") || !strings.Contains(edge, "3 min") {
		t.Errorf("edge-1 row: %q", edge)
	}
	if g := p.text(`#xds tr[data-node="<b>grpc</b>"] td[data-label="Node"]`); g != "<b>grpc</b>" {
		t.Errorf("a node id with markup: %q", g)
	}

	plain, store2 := startRegistry(t, httpapi.AuthConfig{})
	register(t, store2, "ORDERS", "orders-1")
	p.do(chromedp.Navigate("http://"+plain+"/"), visible(row("orders-1")))
	p.waitFor("api/xds read", `document.getElementById("xds-section").dataset.enabled === "false"`, 10*time.Second)
	if got := p.eval(`document.getElementById("xds-section").hidden`); got != true {
		t.Errorf("without xDS the block shows")
	}
}
