package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// backend is an instance on loopback that answers 200, or 500 once told
// to fail.
type backend struct {
	fail atomic.Bool
	srv  *httptest.Server
}

// startTrafficDashboard runs the standalone server with a dashboard that
// samples rec, its sampler started, and returns its address and store.
func startTrafficDashboard(t *testing.T, rec *traffic.Recorder) (string, *registry.Store) {
	t.Helper()
	store := registry.New(registry.Config{})
	d := New(store, Config{Version: "test", Traffic: rec})
	d.Start()
	t.Cleanup(d.Close)
	return serveDashboard(t, store, httpapi.AuthConfig{}, d), store
}

func startBackend(t *testing.T, store *registry.Store, app, id string) *backend {
	t.Helper()
	b := new(backend)
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b.fail.Load() {
			http.Error(w, "failing", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, id)
	}))
	t.Cleanup(b.srv.Close)
	_, port, _ := net.SplitHostPort(b.srv.Listener.Addr().String())
	n, _ := strconv.Atoi(port)
	err := store.Register(&eureka.InstanceInfo{
		InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", App: app, IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: n, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startGateway runs the fasthttp gateway on loopback, counting into rec,
// until the test ends.
func startGateway(t *testing.T, cfg routing.Config, rec *traffic.Recorder) (*gateway.Gateway, *gateway.Server) {
	t.Helper()
	g, err := gateway.New(gateway.Config{Routing: cfg, Traffic: rec})
	if err != nil {
		t.Fatal(err)
	}
	gw := gateway.NewServer(g, gateway.ServerConfig{Addr: "127.0.0.1:0"})
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.StopOnCleanup(t, 10*time.Second, func(ctx context.Context) {
		gw.Stop(ctx)
		g.Close()
	})
	return g, gw
}

// getTraffic reads api/traffic from the dashboard at addr over HTTP.
func getTraffic(t *testing.T, addr string) (TrafficView, error) {
	t.Helper()
	var v TrafficView
	resp, err := http.Get("http://" + addr + "/api/traffic")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&v)
	return v, err
}

// The Traffic panel over a real gateway (package gateway, over the
// registry's Store, with instances on loopback) and the dashboard's
// sampler: a load through the gateway shows each app's live rate; when
// one instance of ORDERS, the quietest app, answers 500, ORDERS gets its
// share of 5xx, a red badge and the first place, and the failing
// instance leads its split. Names are text (an instance id that looks
// like HTML stays text).
func TestDashboardTraffic(t *testing.T) {
	rec := traffic.New()
	addr, store := startTrafficDashboard(t, rec)

	const evil = `<img src=x onerror="window.__pwned=1">`
	startBackend(t, store, "ORDERS", "orders-1")
	failing := startBackend(t, store, "ORDERS", "orders-2")
	startBackend(t, store, "INVENTORY", "inventory-1")
	startBackend(t, store, "INVENTORY", "inventory-2")
	startBackend(t, store, "PAYMENTS", evil)

	_, gw := startGateway(t, routing.Config{Instances: store}, rec)

	// The load: every 40 ms one request to ORDERS, two to INVENTORY and
	// three to PAYMENTS, until the test ends.
	client := &http.Client{Timeout: 5 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	base := "http://" + gw.Addr().String()
	testkit.TickUntilEnd(t, 40*time.Millisecond, func(ctx context.Context) {
		for _, p := range []string{"/orders/x", "/inventory/x", "/inventory/x", "/payments/x", "/payments/x", "/payments/x"} {
			req, _ := http.NewRequestWithContext(ctx, "GET", base+p, nil)
			if resp, err := client.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	})

	p := page{t, browser(t, 1280)}
	p.do(chromedp.Navigate("http://"+addr+"/"), visible("#traffic-section"))
	// Each app's card shows a live rate.
	p.waitFor("a live rate for each app", `(() => {
		const apps = ["ORDERS", "INVENTORY", "PAYMENTS"];
		return apps.every((a) => {
			const r = document.querySelector('#traffic .t-app[data-app="' + a + '"] [data-stat="rate-1m"]');
			return r && parseFloat(r.textContent) > 0;
		});
	})()`, 20*time.Second)
	order := func() string {
		return p.eval(`[...document.querySelectorAll("#traffic .t-app")].map((c) => c.dataset.app).join(" ")`).(string)
	}
	// The busiest first; ORDERS, the quietest, last.
	p.waitFor("the busiest first", `[...document.querySelectorAll("#traffic .t-app")].map((c) => c.dataset.app).join(" ") === "PAYMENTS INVENTORY ORDERS"`, 20*time.Second)
	if n := p.eval(`document.querySelectorAll("#traffic .badge-error, #traffic .has-errors").length`); n != float64(0) {
		t.Errorf("%v error marks without errors", n)
	}
	rates := p.eval(`[...document.querySelectorAll('#traffic [data-stat="rate-1m"]')].map((e) => e.textContent).join(" ")`)
	t.Logf("order %s, rates %v req/s", order(), rates)
	if got := p.text(`#traffic .t-app[data-app="PAYMENTS"] .t-instances`); !strings.Contains(got, evil) {
		t.Errorf("PAYMENTS' instance: %q", got)
	}
	if n := p.eval(`document.querySelectorAll("#traffic img").length + (window.__pwned ? 100 : 0)`); n != float64(0) {
		t.Errorf("markup from an instance id reached the page: %v", n)
	}
	if w := p.eval(`document.querySelector('#traffic .t-app[data-app="INVENTORY"] .t-bar span').getBoundingClientRect().width`).(float64); w < 10 {
		t.Errorf("an instance's share bar is %v px wide", w)
	}
	if n := p.eval(`document.querySelectorAll("#traffic .t-app svg.t-chart .s-requests path").length`); n != float64(6) {
		t.Errorf("%v request lines, want 2 charts for each of 3 apps", n)
	}

	// One instance of ORDERS fails, a few seconds on (for the charts).
	p.do(chromedp.Sleep(3 * time.Second))
	failing.fail.Store(true)
	p.waitFor("ORDERS marked and first", `(() => {
		const first = document.querySelector("#traffic .t-app");
		return first && first.dataset.app === "ORDERS" && first.classList.contains("has-errors") &&
			first.querySelector("h3 .badge-error") !== null;
	})()`, 20*time.Second)
	card := `#traffic .t-app[data-app="ORDERS"]`
	badge := p.text(card + ` h3 .badge-error`)
	share := p.text(card + ` [data-stat="errors-1m"]`)
	if !strings.HasPrefix(badge, "5xx ") || share == "0%" || !strings.HasSuffix(share, "%") {
		t.Errorf("ORDERS' badge %q, 5xx share %q", badge, share)
	}
	if first := p.eval(`document.querySelector('` + card + ` .t-instances li').dataset.instance`); first != "orders-2" {
		t.Errorf("the failing instance is not first in the split: %v", first)
	}
	if got := p.text(card + ` .t-instances li.bad`); !strings.Contains(got, "orders-2") || !strings.Contains(got, "% 5xx") {
		t.Errorf("the failing instance: %q", got)
	}
	if note := p.text("#traffic-failing"); note != "1 with 5xx answers" {
		t.Errorf("the panel's note: %q", note)
	}
	t.Logf("after the failure: order %s, ORDERS badge %q, 5xx share %q", order(), badge, share)

	// The endpoint agrees.
	v, err := getTraffic(t, addr)
	if err != nil || len(v.Apps) != 3 || v.Apps[0].App != "ORDERS" || v.Apps[0].LastMinute.ErrorShare <= 0 ||
		v.Apps[0].Instances[0].ID != "orders-2" {
		t.Errorf("api/traffic: %v %+v", err, v)
	}

	p.do(chromedp.Sleep(3 * time.Second)) // the charts show the errors' line
	p.screenshot("dashboard-traffic-1280.png")
	panel := func(name string) {
		t.Helper()
		p.eval(`document.querySelector("header").style.position = "static"`) // not over the element
		png, err := chromedp.Run(p.ctx, chromedp.Screenshot(chromedp.CSS("#traffic-section")))
		if err != nil {
			t.Fatal(err)
		}
		artifact(t, name, png)
		p.eval(`document.querySelector("header").style.position = ""`)
	}
	panel("dashboard-traffic-panel-1280.png")
	p.do(chromedp.EmulateViewport(390, 844))
	p.waitFor("one card a row", `(() => {
		const cards = [...document.querySelectorAll("#traffic .t-app")];
		return cards.length === 3 && cards[0].getBoundingClientRect().width < 390 && cards[1].getBoundingClientRect().top > cards[0].getBoundingClientRect().bottom;
	})()`, 5*time.Second)
	if over := p.eval(`document.documentElement.scrollWidth > window.innerWidth`); over != false {
		t.Error("the page is wider than a 390 px screen")
	}
	p.screenshot("dashboard-traffic-390.png")
	panel("dashboard-traffic-panel-390.png")
}

// Among 100 apps fed to the Recorder directly, the page shows the first
// 12 and the rest on demand; an app whose instance starts failing comes
// first with its red badge, within a few reads, and the page stays
// responsive while it redraws every second.
func TestDashboardTrafficHundredApps(t *testing.T) {
	rec := traffic.New()
	addr, _ := startTrafficDashboard(t, rec)

	var fail atomic.Bool
	testkit.TickUntilEnd(t, 100*time.Millisecond, func(context.Context) {
		for a := range 100 {
			app := fmt.Sprintf("APP-%03d", a)
			for i := range 4 {
				status := 200
				if a == 57 && i == 3 && fail.Load() {
					status = 500
				}
				serve(rec, app, fmt.Sprintf("app-%03d-%d", a, i), 1+a%5, status, time.Duration(1+a%20)*time.Millisecond)
			}
		}
	})

	p := page{t, browser(t, 1280)}
	if _, err := chromedp.Call(p.ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: longTasks}); err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.Navigate("http://" + addr + "/"))
	p.waitFor("12 cards and a button for the rest", `document.querySelectorAll("#traffic .t-app").length === 12 &&
		document.getElementById("traffic-more").textContent === "Show all 100 apps"`, 20*time.Second)
	if first := p.eval(`document.querySelector("#traffic .t-app").dataset.app`); first == "APP-057" {
		t.Fatalf("APP-057 first before it fails")
	}
	from := p.eval(`performance.now()`).(float64)
	fail.Store(true)
	p.waitFor("APP-057 first, marked", `(() => {
		const first = document.querySelector("#traffic .t-app");
		return first.dataset.app === "APP-057" && first.querySelector(".badge-error") !== null;
	})()`, 20*time.Second)
	if n := p.eval(`document.querySelectorAll("#traffic .badge-error").length`); n != float64(1) {
		t.Errorf("%v red badges, want APP-057's", n)
	}
	p.do(click("#traffic-more"))
	p.waitFor("every app with its charts", `document.querySelectorAll("#traffic .t-app").length === 100 &&
		document.querySelectorAll("#traffic .t-app svg.t-chart").length === 200`, 10*time.Second)
	p.do(chromedp.Sleep(3 * time.Second)) // redrawn every second
	longest := p.eval(fmt.Sprintf(`Math.max(0, ...window.__longTasks.filter((e) => e.start >= %f).map((e) => e.duration))`, from)).(float64)
	t.Logf("longest main-thread task with 100 apps' traffic: %.0f ms (0: none over 50 ms)", longest)
	if longest > 1000 {
		t.Errorf("longest task %.0f ms", longest)
	}
	// A card off screen is redrawn when it comes into view.
	p.eval(`document.querySelector('#traffic .t-app:last-child').scrollIntoView()`)
	p.waitFor("the last card up to date", `(() => {
		const c = document.querySelector("#traffic .t-app:last-child");
		return c._data && c._drawn === c._data;
	})()`, 5*time.Second)
	p.do(click("#traffic-more"))
	p.waitFor("back to 12", `document.querySelectorAll("#traffic .t-app").length === 12`, 5*time.Second)
}

// Without a gateway's traffic the page has no Traffic panel at all, once
// it has asked api/traffic.
func TestDashboardNoTrafficPanel(t *testing.T) {
	addr, store := startRegistry(t, httpapi.AuthConfig{})
	register(t, store, "ORDERS", "orders-1")
	p := page{t, browser(t, 1280)}
	p.do(chromedp.Navigate("http://"+addr+"/"), visible(row("orders-1")))
	p.waitFor("api/traffic read", `performance.getEntriesByType("resource").some((e) => e.name.includes("api/traffic") && e.responseEnd > 0)`, 10*time.Second)
	p.do(chromedp.Sleep(200 * time.Millisecond)) // its answer applied
	got := p.eval(`(() => {
		const s = document.getElementById("traffic-section");
		return [s.hidden, s.getBoundingClientRect().height, document.querySelectorAll(".t-app").length].join(" ");
	})()`)
	if got != "true 0 0" {
		t.Errorf("traffic section (hidden, height, cards): %v", got)
	}
	if body := p.text("main"); strings.Contains(body, "Traffic") && !strings.Contains(body, "Traffic rules") {
		t.Errorf("the page mentions Traffic: %s", fmt.Sprint(len(body)))
	}
}
