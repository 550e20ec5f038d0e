package dashboard

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/regions"
)

// The Remote regions block: one row per region with its state, instances
// and the age of its last sync, while the General facts count only the
// local instances; a node without remote regions has no block.
func TestDashboardRemoteRegions(t *testing.T) {
	addr, store := startRegistryWith(t, httpapi.AuthConfig{}, registry.Config{
		RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}, {Name: "ap-south"}}})
	register(t, store, "ORDERS", "orders-1")
	remote := &eureka.Applications{Applications: []*eureka.Application{{Name: "ORDERS",
		Instances: []*eureka.InstanceInfo{testkit.Inst("ORDERS", "eu-1"), testkit.Inst("ORDERS", "eu-2")}}}}
	if err := regions.MirrorOf(store).Update("eu-west", remote, time.Now()); err != nil {
		t.Fatal(err)
	}
	regions.MirrorOf(store).Failed("ap-south", time.Now(), errors.New("connection refused"))

	p := page{t, browser(t, 1280)}
	p.do(chromedp.Navigate("http://"+addr+"/"), visible(row("orders-1")), visible(`#regions tr[data-region="ap-south"]`))
	if eu := p.text(`#regions tr[data-region="eu-west"]`); !strings.Contains(eu, "ready") || !strings.Contains(eu, "s ago") ||
		p.text(`#regions tr[data-region="eu-west"] td[data-label="Instances"]`) != "2" {
		t.Errorf("eu-west row: %q", eu)
	}
	if ap := p.text(`#regions tr[data-region="ap-south"]`); !strings.Contains(ap, "unreachable") || !strings.Contains(ap, "never") ||
		!strings.Contains(ap, "connection refused") {
		t.Errorf("ap-south row: %q", ap)
	}
	// The facts come from their own read: wait for them, not only for
	// the rows.
	p.waitFor("the general facts", `document.querySelector('#general [data-fact="instances"]').textContent !== ""`, 10*time.Second)
	if n := p.text(`#general [data-fact="instances"]`); n != "1" {
		t.Errorf("local instances %q: the remote ones must not count", n)
	}

	plain, store2 := startRegistry(t, httpapi.AuthConfig{})
	register(t, store2, "ORDERS", "orders-1")
	p.do(chromedp.Navigate("http://"+plain+"/"), visible(row("orders-1")))
	p.waitFor("api/regions read", `performance.getEntriesByType("resource").some((e) => e.name.includes("api/regions") && e.responseEnd > 0)`, 10*time.Second)
	p.do(chromedp.Sleep(200 * time.Millisecond)) // its answer applied
	if got := p.eval(`document.getElementById("regions-section").hidden`); got != true {
		t.Errorf("without remote regions the block shows")
	}
}
