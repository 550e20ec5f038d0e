package dashboard

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/browsertest"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/routing"
)

// startRegistry runs the standalone server with the dashboard at / on
// loopback.
func startRegistry(t *testing.T, auth httpapi.AuthConfig) (string, *registry.Store) {
	t.Helper()
	return startRegistryWith(t, auth, registry.Config{})
}

func startRegistryWith(t *testing.T, auth httpapi.AuthConfig, cfg registry.Config) (string, *registry.Store) {
	t.Helper()
	return startRegistryDashboard(t, auth, cfg, Config{Version: "test"})
}

func startRegistryDashboard(t *testing.T, auth httpapi.AuthConfig, cfg registry.Config, dash Config) (string, *registry.Store) {
	t.Helper()
	store := registry.New(cfg)
	d := New(store, dash)
	t.Cleanup(d.Close)
	return serveDashboard(t, store, auth, d), store
}

// serveDashboard runs the standalone server over store on loopback, with
// d at / behind the API's protection, until the test ends, and returns
// its address.
func serveDashboard(t *testing.T, store *registry.Store, auth httpapi.AuthConfig, d *Handler) string {
	t.Helper()
	api := httpapi.NewAPI(store, httpapi.APIConfig{Auth: auth})
	srv := httpapi.NewServer(api, httpapi.ServerConfig{
		Addr: "127.0.0.1:0", Other: api.Protect(d),
	})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop(context.Background()) })
	return srv.Addr().String()
}

func register(t *testing.T, store *registry.Store, app, id string) {
	t.Helper()
	err := store.Register(&eureka.InstanceInfo{
		InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", App: app, IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: 8080, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
		Metadata:       map[string]string{"zone": "zone-a"},
		StatusPageURL:  "http://127.0.0.1:8080/info", HealthCheckURL: "javascript:alert(1)",
	}, false)
	if err != nil {
		t.Fatal(err)
	}
}

// browser starts headless Chromium with no network beyond loopback.
func browser(t *testing.T, width int) context.Context { return browsertest.Browser(t, width) }

// artifact saves a screenshot where CI keeps test artifacts.
func artifact(t *testing.T, name string, png []byte) { browsertest.Artifact(t, "..", name, png) }

func row(id string) string { return fmt.Sprintf(`tr[data-instance=%q]`, id) }

// page drives one browser tab.
type page struct {
	t   *testing.T
	ctx context.Context
}

func (p page) tab() browsertest.Page { return browsertest.Page{T: p.t, Ctx: p.ctx} }

func (p page) do(actions ...chromedp.Action[chromedp.Void]) { p.t.Helper(); p.tab().Do(actions...) }

func (p page) text(sel string) string { p.t.Helper(); return p.tab().Text(sel) }

func (p page) screenshot(name string) { p.t.Helper(); p.tab().Screenshot("..", name) }

func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}
func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }
func gone(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitNotPresent(chromedp.CSS(sel))
}

// confirm answers the page's confirmation dialog.
func confirm(button string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{visible(button), click(button)}
}

// The dashboard shows a new instance without a reload, takes it out of
// service from the page and deregisters it, each after a confirmation.
func TestDashboardInBrowser(t *testing.T) {
	addr, store := startRegistry(t, httpapi.AuthConfig{})
	register(t, store, "ORDERS", "orders-1")
	p := page{t, browser(t, 1280)}

	p.do(chromedp.Navigate("http://"+addr+"/"), visible(row("orders-1")))
	if first := p.text(row("orders-1")); !strings.Contains(first, "ORDERS") || !strings.Contains(first, "UP") || !strings.Contains(first, "zone-a") {
		t.Fatalf("row: %q", first)
	}

	// The self-preservation numbers are read from the snake_case summary.
	body, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(body, "undefined") || !strings.Contains(body, "Expected renewing clients") {
		t.Errorf("page text: %q", body)
	}

	// Registered after the page loaded: it appears without a reload.
	register(t, store, "INVENTORY", "inventory-1")
	p.do(visible(row("inventory-1")))

	// Take it out of service, confirming in the dialog.
	p.do(click(row("inventory-1") + ` button:not(.danger)`))
	p.do(confirm("#confirm-ok")...)
	p.do(visible(row("inventory-1") + ` .status-OUT_OF_SERVICE`))
	if i, _ := store.Get("INVENTORY", "inventory-1"); i.Status != eureka.StatusOutOfService {
		t.Fatalf("registry status after taking it out of service: %v", i.Status)
	}
	p.screenshot("dashboard.png")

	// Deregister it: it disappears.
	p.do(click(row("inventory-1") + ` button.danger`))
	p.do(confirm("#confirm-ok")...)
	p.do(gone(row("inventory-1")))
	if _, ok := store.Get("INVENTORY", "inventory-1"); ok {
		t.Fatal("still registered after deregistering")
	}
	if result := p.text("#result"); !strings.Contains(result, "done") {
		t.Fatalf("result line: %q", result)
	}

	// A cancelled confirmation changes nothing.
	p.do(click(row("orders-1") + ` button.danger`))
	p.do(confirm("#confirm-cancel")...)
	p.do(chromedp.Sleep(300 * time.Millisecond))
	if _, ok := store.Get("ORDERS", "orders-1"); !ok {
		t.Fatal("a cancelled confirmation deregistered the instance")
	}

	// The unsafe health link was not rendered.
	links, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.querySelectorAll('a[href^="javascript"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if links != 0 {
		t.Error("a javascript: link reached the page")
	}
}

// An empty registry says so once it is loaded; before, the page says only
// that it is loading.
func TestDashboardEmptyRegistry(t *testing.T) {
	index, err := static.ReadFile("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(index), `<p id="no-apps" class="muted" hidden>`) {
		t.Error(`"No instance is registered." shows before the first fetch`)
	}
	addr, _ := startRegistry(t, httpapi.AuthConfig{})
	p := page{t, browser(t, 1280)}
	p.do(chromedp.Navigate("http://"+addr+"/"), visible("#no-apps"))
	if text := p.text("#no-apps"); text != "No instance is registered." {
		t.Errorf("no-apps: %q", text)
	}
}

// On a narrow screen the table becomes one card per instance.
func TestDashboardNarrowScreen(t *testing.T) {
	addr, store := startRegistry(t, httpapi.AuthConfig{})
	register(t, store, "ORDERS", "orders-1")
	p := page{t, browser(t, 390)}
	p.do(chromedp.Navigate("http://"+addr+"/"), visible(row("orders-1")))
	display, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('#instances td[data-label="Instance"]')).display`))
	if err != nil {
		t.Fatal(err)
	}
	if display != "block" {
		t.Errorf("narrow layout not applied: td display %q", display)
	}
	p.screenshot("dashboard-narrow.png")
}

// With auth on, the page is challenged and its actions carry the
// credentials the browser holds for the registry (as after the operator
// answered the basic-auth prompt).
func TestDashboardActionsCarryCredentials(t *testing.T) {
	hash, err := httpapi.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	addr, store := startRegistry(t, httpapi.AuthConfig{Users: []httpapi.Account{{Username: "ops", PasswordHash: hash}}})
	register(t, store, "ORDERS", "orders-1")
	p := page{t, browser(t, 1280)}
	// Without credentials the page itself is refused.
	if resp, err := http.Get("http://" + addr + "/"); err != nil || resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("page without credentials: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if _, err := chromedp.Call(p.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
		Headers: network.Headers{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:s3cret"))},
	}); err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.Navigate("http://"+addr+"/"), visible(row("orders-1")))
	p.do(click(row("orders-1") + ` button:not(.danger)`))
	p.do(confirm("#confirm-ok")...)
	p.do(visible(row("orders-1") + ` .status-OUT_OF_SERVICE`))

	// Without credentials the same kind of action is refused.
	req, _ := http.NewRequest("DELETE", "http://"+addr+"/eureka/apps/ORDERS/orders-1", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("action without credentials: %d", resp.StatusCode)
	}
}

// fleet registers apps x per instances: apps APP-000, APP-001, ...,
// instances app-000-0000, ... on hosts 10.0.a.i, in three zones, mostly UP.
func fleet(t *testing.T, store *registry.Store, apps, per int) {
	t.Helper()
	statuses := []eureka.Status{eureka.StatusUp, eureka.StatusUp, eureka.StatusUp, eureka.StatusUp, eureka.StatusUp,
		eureka.StatusUp, eureka.StatusUp, eureka.StatusUp, eureka.StatusDown, eureka.StatusStarting}
	for a := range apps {
		for i := range per {
			err := store.Register(&eureka.InstanceInfo{
				InstanceID: fmt.Sprintf("app-%03d-%04d", a, i), HasInstanceID: true,
				HostName: fmt.Sprintf("10.0.%d.%d", a, i), App: fmt.Sprintf("APP-%03d", a), IPAddr: fmt.Sprintf("10.0.%d.%d", a, i),
				Status: statuses[(a+i)%len(statuses)], Port: eureka.Port{Number: 8080, Enabled: true},
				DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
				Metadata:       map[string]string{"zone": fmt.Sprintf("zone-%c", 'a'+i%3)},
				StatusPageURL:  fmt.Sprintf("http://10.0.%d.%d:8080/info", a, i),
				HealthCheckURL: fmt.Sprintf("http://10.0.%d.%d:8080/health", a, i),
			}, false)
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// churn changes the fleet until ctx ends, as a busy registry does: every
// 100 ms it flips ten instances between UP and OUT_OF_SERVICE and cancels
// and re-registers two.
func churn(ctx context.Context, store *registry.Store, apps, per int) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for k := range 12 {
			a, i := (n*7+k*13)%apps, (n*11+k*17)%per
			app, id := fmt.Sprintf("APP-%03d", a), fmt.Sprintf("app-%03d-%04d", a, i)
			switch {
			case k < 10 && n%2 == 0:
				store.SetStatus(app, id, eureka.StatusOutOfService, 0, false)
			case k < 10:
				store.DeleteStatusOverride(app, id, eureka.StatusUp, 0, false)
			default:
				if inst, ok := store.Get(app, id); ok {
					store.Cancel(app, id, false)
					inst.Status = eureka.StatusUp
					inst.OverriddenStatus = eureka.StatusUnknown
					store.Register(inst, false)
				}
			}
		}
	}
}

// longTasks records the page's long main-thread tasks (50 ms or more,
// the Long Tasks API's floor) from before its scripts run.
const longTasks = `window.__longTasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
}).observe({ type: "longtask", buffered: true });`

// clearSearch empties the search box as the Escape key does.
const clearSearch = `(() => { const s = document.getElementById("search"); s.value = ""; s.dispatchEvent(new Event("input")); })()`

func (p page) eval(expr string) any { p.t.Helper(); return p.tab().Eval(expr) }

// waitFor polls a JavaScript condition until it holds.
func (p page) waitFor(what, cond string, timeout time.Duration) {
	p.t.Helper()
	p.tab().WaitFor(what, cond, timeout)
}

// With 10,000 instances over 100 apps the page shows the totals soon,
// stays responsive during live refreshes, finds an app as you type and
// shows a registration made meanwhile without a reload.
func TestDashboardFleet(t *testing.T) {
	const apps, per = 100, 100
	addr, store := startRegistry(t, httpapi.AuthConfig{})
	fleet(t, store, apps, per)
	p := page{t, browser(t, 1280)}
	if _, err := chromedp.Call(p.ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: longTasks}); err != nil {
		t.Fatal(err)
	}

	opened := time.Now()
	p.do(chromedp.Navigate("http://" + addr + "/"))
	p.waitFor("the instance count", `document.querySelector('#general [data-fact="instances"]')?.textContent === "10000"`, 15*time.Second)
	t.Logf("totals shown %v after opening", time.Since(opened).Round(time.Millisecond))
	if n := p.eval(`document.querySelectorAll("#instances tbody tr").length`).(float64); n > 50 {
		t.Errorf("%v rows in the DOM: more than a page", n)
	}
	p.waitFor("the charts", `document.querySelectorAll("#charts svg.chart .series path").length >= 6`, 10*time.Second)

	// Ten seconds of live refreshes, measured from here.
	from := p.eval(`performance.now()`).(float64)
	live := time.Now()
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { churn(ctx, store, apps, per) })
	defer func() { stop(); wg.Wait() }()

	// Rows are updated in place: the first app's header row stays the same
	// element while its counts change.
	p.eval(`document.querySelector('tr.app-row[data-app="APP-000"]').__kept = true`)
	p.do(chromedp.Sleep(2 * time.Second))
	if kept := p.eval(`!!document.querySelector('tr.app-row[data-app="APP-000"]').__kept`).(bool); !kept {
		t.Error("the app's row was rebuilt rather than updated in place")
	}

	// A registration made now appears without a reload. The "/" key goes
	// to the search box.
	p.do(chromedp.KeyEvent("/"))
	if focus := p.eval(`document.activeElement.id`); focus != "search" {
		t.Errorf(`"/" focused %v`, focus)
	}
	p.eval(clearSearch) // CDP sends the "/" again as a char event, which a real keyboard's prevented keydown does not
	p.do(chromedp.SendKeys("#search", "late-1"))
	p.waitFor("no match", `!document.getElementById("no-apps").hidden`, 5*time.Second)
	register(t, store, "LATE", "late-1")
	p.do(visible(row("late-1")))
	if loc := p.eval(`location.hash`).(string); loc != "#q=late-1" {
		t.Errorf("the search is not in the URL: %q", loc)
	}

	// Typing an app's name shows that app and hides the others.
	p.eval(clearSearch)
	p.do(chromedp.SendKeys("#search", "APP-042"))
	p.waitFor("only APP-042", `(() => {
		const rows = [...document.querySelectorAll("#instances tbody tr")];
		return rows.length > 0 && rows.every((tr) => tr.dataset.app === "APP-042");
	})()`, 5*time.Second)

	if rest := 10*time.Second - time.Since(live); rest > 0 {
		p.do(chromedp.Sleep(rest))
	}
	stop()
	wg.Wait()
	longest := p.eval(fmt.Sprintf(`Math.max(0, ...window.__longTasks.filter((e) => e.start >= %f).map((e) => e.duration))`, from)).(float64)
	atLoad := p.eval(fmt.Sprintf(`Math.max(0, ...window.__longTasks.filter((e) => e.start < %f).map((e) => e.duration))`, from)).(float64)
	refreshes := p.eval(fmt.Sprintf(`performance.getEntriesByType("resource").filter((e) => e.name.includes("api/changes") && e.startTime >= %f).length`, from)).(float64)
	t.Logf("longest main-thread task: %.0f ms during 10 s of live refreshes (%.0f requests to api/changes; 0: no task over 50 ms); %.0f ms while loading",
		longest, refreshes, atLoad)
	if refreshes < 5 {
		t.Errorf("only %.0f refreshes in 10 s of changes", refreshes)
	}
	if longest > 200 {
		t.Logf("above the 200 ms goal (allowed up to 1 s on a loaded machine)")
	}
	if longest > 1000 {
		t.Errorf("longest task %.0f ms during live refreshes", longest)
	}
	// The observer sees long tasks: a 120 ms one is recorded.
	p.eval(`setTimeout(() => { const t = performance.now(); while (performance.now() - t < 120); }, 0)`)
	p.waitFor("the observer to record a long task", `window.__longTasks.some((e) => e.duration >= 120)`, 5*time.Second)

	// Screenshots, with the first app open.
	p.eval(clearSearch)
	p.do(click(`tr.app-row[data-app="APP-000"] button.toggle`), visible(row("app-000-0000")))
	p.screenshot("dashboard-fleet-1280.png")
	p.do(chromedp.EmulateViewport(390, 844))
	p.waitFor("the narrow layout", `getComputedStyle(document.querySelector('#instances td[data-label="Instance"]')).display === "block"`, 5*time.Second)
	p.screenshot("dashboard-fleet-390.png")
}

// The charts draw 15 minutes of a registry's life: registrations, a
// cancel, a crash whose instances are evicted, a partition during which
// renews fall below the threshold and self-preservation holds, and the
// recovery. The registry's clock is a fake one; the page is open all
// along (its reads sample the registry).
func TestDashboardCharts(t *testing.T) {
	clock := testkit.NewFakeClock()
	addr, store := startRegistryWith(t, httpapi.AuthConfig{}, registry.Config{Clock: clock})
	sample := func() {
		resp, err := http.Get("http://" + addr + "/api/charts")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	var alive []*eureka.InstanceInfo
	add := func(app string, n int) {
		for range n {
			i := testkit.Inst(app, fmt.Sprintf("%s-%d", strings.ToLower(app), len(alive)))
			testkit.MustRegister(t, store, i, false)
			alive = append(alive, i)
		}
	}
	add("ORDERS", 12)
	add("INVENTORY", 10)
	add("PAYMENTS", 8)
	for m := range 15 {
		switch m {
		case 2:
			add("SEARCH", 1)
		case 3:
			store.Cancel(alive[len(alive)-1].App, alive[len(alive)-1].ID(), false)
			alive = alive[:len(alive)-1]
			store.SetStatus("ORDERS", alive[5].ID(), eureka.StatusOutOfService, 0, false)
		case 6:
			if got := store.Evict(); len(got) != 3 {
				t.Fatalf("evicted at minute 6: %v", got)
			}
			alive = alive[3:]
		case 12:
			add("SEARCH", 3)
		}
		renewing := alive
		switch {
		case m >= 4 && m < 6:
			renewing = alive[3:] // three crash at minute 4: evicted at 6
		case m >= 8 && m < 11:
			renewing = alive[:10] // a partition: self-preservation from 9 to 11
		}
		for _, i := range renewing {
			for range 2 {
				store.Renew(i.App, i.ID(), registry.RenewRequest{})
			}
		}
		sample()
		clock.Advance(30 * time.Second)
		sample()
		clock.Advance(30 * time.Second)
	}
	clock.Advance(10 * time.Second)

	var c Charts
	resp, err := http.Get("http://" + addr + "/api/charts")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&c)
	resp.Body.Close()
	// Self-preservation holds from the start until the first minute of
	// renews, and during the partition.
	if len(c.Minutes) != 16 || len(c.Markers) != 3 || c.Minutes[6].Evicted != 3 {
		t.Fatalf("charts: %d minutes, markers %+v, evicted at 6: %d", len(c.Minutes), c.Markers, c.Minutes[6].Evicted)
	}

	p := page{t, browser(t, 1280)}
	p.do(chromedp.Navigate("http://"+addr+"/"), visible(row("orders-3")))
	p.waitFor("the charts", `document.querySelectorAll("#charts svg.chart").length === 3`, 10*time.Second)
	// Each series is a line through its minutes, and the markers are on
	// every chart.
	points := p.eval(`[...document.querySelectorAll("#chart-renews .s-renews path")].map((p) => p.getAttribute("d").split(/[ML]/).length - 1)[0]`)
	if points != float64(15) {
		t.Errorf("renews line: %v points, want 15 (the minutes before the current one)", points)
	}
	if n := p.eval(`document.querySelectorAll("#charts line.marker").length`); n != float64(9) {
		t.Errorf("%v marker lines, want 3 on each of 3 charts", n)
	}
	if n := p.eval(`document.querySelectorAll("#chart-status .series").length`); n != float64(2) {
		t.Errorf("%v status series, want UP and OUT_OF_SERVICE", n)
	}
	if label := p.eval(`document.querySelector("#chart-changes svg").getAttribute("aria-label")`).(string); !strings.Contains(label, "3 evictions") {
		t.Errorf("chart label: %q", label)
	}
	p.eval(`document.querySelector("header").style.position = "static"`) // not over the element
	png, err := chromedp.Run(p.ctx, chromedp.Screenshot(chromedp.CSS("#charts")))
	if err != nil {
		t.Fatal(err)
	}
	artifact(t, "dashboard-charts.png", png)
}

// An app with traffic rules shows them in its section, conditions to
// targets with their weights, sticky key, default and fallback, and the
// instances of each subset, as text (an instance id and a rule's value
// that look like HTML stay text); a registration joins its subset without
// a reload. An app without rules shows no rules.
func TestDashboardTrafficRules(t *testing.T) {
	// ORDERS's rules, with a canary header value that looks like HTML.
	rules := mustRules(t, strings.Replace(ordersRules, `X-Canary: "1"`, `X-Canary: "<i>1</i>"`, 1))
	addr, store := startRegistryDashboard(t, httpapi.AuthConfig{}, registry.Config{},
		Config{Version: "test", Rules: func() *routing.Rules { return rules }})
	const evil = `<img src=x onerror="window.__pwned=1">`
	versioned(t, store, "ORDERS", "orders-1", "2.0", eureka.StatusUp)
	versioned(t, store, "ORDERS", "orders-2", "2.1", eureka.StatusUp)
	versioned(t, store, "ORDERS", evil, "2.1", eureka.StatusDown)
	versioned(t, store, "ORDERS", "orders-3", "", eureka.StatusUp)
	register(t, store, "INVENTORY", "inventory-1")
	p := page{t, browser(t, 1280)}

	const block = `tr.rules-row[data-app="ORDERS"]`
	p.do(chromedp.Navigate("http://"+addr+"/"), visible(block), visible(row("inventory-1")))
	got := p.text(block)
	for _, want := range []string{
		"Traffic rules from rules.yaml",
		"if header X-Canary = <i>1</i> → version=2.1",
		"if cookie tenant = acme → version=2.1 10% (weight 10), version=2.0 90% (weight 90) · sticky by header X-User-Id",
		"otherwise → version=2.0 (default)",
		"Fallback, when a subset has no instance that can take a request: none",
		"1 instance in no subset",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rules block lacks %q:\n%s", want, got)
		}
	}
	subset := func(label string) string {
		return fmt.Sprintf(`%s li[data-subset=%q]`, block, label)
	}
	if s := p.text(subset("version=2.0")); !strings.Contains(s, "version=2.0 default: 1 instance · 1 UP") || !strings.Contains(s, "orders-1 UP") {
		t.Errorf("default subset: %q", s)
	}
	if s := p.text(subset("version=2.1")); !strings.Contains(s, "2 instances · 1 UP · 1 DOWN") || !strings.Contains(s, "orders-2 UP") || !strings.Contains(s, evil+" DOWN") {
		t.Errorf("canary subset: %q", s)
	}
	if n := p.eval(`document.querySelectorAll("#instances img, #instances i").length + (window.__pwned ? 100 : 0)`); n != float64(0) {
		t.Errorf("markup from an instance id or a rule reached the page: %v", n)
	}
	if n := p.eval(`document.querySelectorAll('tr.rules-row:not([data-app="ORDERS"])').length`); n != float64(0) {
		t.Errorf("%v rules blocks for apps without rules", n)
	}
	if note := p.text(`tr.app-row[data-app="ORDERS"] .counts`); !strings.Contains(note, "traffic rules") {
		t.Errorf("app header: %q", note)
	}
	if note := p.text(`tr.app-row[data-app="INVENTORY"] .counts`); strings.Contains(note, "traffic rules") {
		t.Errorf("app header without rules: %q", note)
	}

	// Registered after the page loaded: it joins its subset.
	versioned(t, store, "ORDERS", "orders-4", "2.1", eureka.StatusUp)
	p.do(visible(subset("version=2.1") + ` [data-instance="orders-4"]`))
	p.screenshot("dashboard-rules.png")

	// Collapsed, the app keeps its note and hides the block.
	p.do(click(`tr.app-row[data-app="ORDERS"] button.toggle`), gone(block))
}
