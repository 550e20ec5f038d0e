package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/dashboard"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// churn is a gateway over a Store on a fake clock, the dashboard over its
// traffic, and one loopback instance that every registration names.
type churn struct {
	t      *testing.T
	clock  *testkit.FakeClock
	store  *registry.Store
	g      *Gateway
	base   string
	port   int
	scrape func(t *testing.T) string
	page   *dashboard.Handler
	client *http.Client
}

func newChurn(t *testing.T) *churn {
	clock := testkit.NewFakeClock()
	store := registry.New(registry.Config{Clock: clock})
	backend := httptest.NewServer(named("ok"))
	t.Cleanup(backend.Close)
	// The loops close their idle connections to departed instances at
	// each tick, every SweepInterval at most: the connections' series go
	// with them.
	base, g, _ := start(t, Config{Now: clock.Now, SweepInterval: 20 * time.Millisecond}, store)
	page := dashboard.New(store, dashboard.Config{Traffic: g.Traffic()})
	t.Cleanup(func() { page.Close() })
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	t.Cleanup(client.CloseIdleConnections)
	return &churn{t: t, clock: clock, store: store, g: g, base: base, port: backend.Listener.Addr().(*net.TCPAddr).Port,
		scrape: suiteMetrics(g).Scrape, page: page, client: client}
}

// registerAll registers n instances of each app, ids <app>-<k>.
func (c *churn) registerAll(apps []string, n int) {
	for _, app := range apps {
		for k := range n {
			register(c.t, c.store, app, fmt.Sprintf("%s-%d", app, k), c.port)
		}
	}
}

// requestAll sends n requests to each app: one to each of its n
// instances, in turn.
func (c *churn) requestAll(apps []string, n int) {
	c.t.Helper()
	for _, app := range apps {
		for range n {
			resp, err := c.client.Get(c.base + "/" + app + "/x")
			if err != nil {
				c.t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				c.t.Fatalf("/%s/x: %d", app, resp.StatusCode)
			}
		}
	}
}

func (c *churn) cancelAll(apps []string, n int) {
	for _, app := range apps {
		for k := range n {
			c.store.Cancel(strings.ToUpper(app), fmt.Sprintf("%s-%d", app, k), false)
		}
	}
}

// series returns the gateway's series on /metrics, and those with an
// instance label.
func (c *churn) series() (all, instances int) {
	for _, line := range strings.Split(c.scrape(c.t), "\n") {
		if !strings.HasPrefix(line, "eureka_gateway_") {
			continue
		}
		all++
		if strings.Contains(line, `instance="`) {
			instances++
		}
	}
	return all, instances
}

// settle waits for the gateway's series to be want in number, as they
// are once the loops have closed their connections to departed
// instances (instance_connections), and returns it.
func (c *churn) settle(want int) int {
	c.t.Helper()
	var all int
	testkit.Eventually(c.t, 5*time.Second, fmt.Sprintf("%d series in all", want), func() bool {
		all, _ = c.series()
		return all == want
	})
	return all
}

// traffic returns api/traffic's apps and its size in bytes.
func (c *churn) traffic() (apps []dashboard.AppTraffic, size int) {
	w := httptest.NewRecorder()
	c.page.ServeHTTP(w, httptest.NewRequest("GET", "/api/traffic", nil))
	if w.Code != 200 {
		c.t.Fatalf("api/traffic: %d", w.Code)
	}
	var v dashboard.TrafficView
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		c.t.Fatal(err)
	}
	return v.Apps, w.Body.Len()
}

func appNames(prefix string, n int) []string {
	out := make([]string, n)
	for k := range out {
		out[k] = fmt.Sprintf("%s%03d", prefix, k)
	}
	return out
}

// 300 instances (100 apps of 3) registered, requested once and
// cancelled: within traffic.Grace their series stay (a scrape reads their
// last values); after it, every one of them is gone from /metrics, and
// their apps from api/traffic.
func TestDepartedSeriesDropped(t *testing.T) {
	c := newChurn(t)
	before, _ := c.series()
	c.traffic() // the dashboard's baseline sample
	apps := appNames("gone-", 100)
	c.registerAll(apps, 3)
	c.requestAll(apps, 3)
	if _, n := c.series(); n != 300 {
		t.Fatalf("%d instance series while registered, want 300", n)
	}
	c.clock.Advance(time.Second)
	if got, _ := c.traffic(); len(got) != 100 {
		t.Fatalf("api/traffic has %d apps while registered, want 100", len(got))
	}

	c.cancelAll(apps, 3)
	c.g.sweep()
	if _, n := c.series(); n != 300 {
		t.Fatalf("%d instance series within the grace, want 300", n)
	}
	c.clock.Advance(traffic.Grace)
	c.g.sweep()
	if _, n := c.series(); n != 0 {
		t.Fatalf("after the grace: %d instance series, want 0", n)
	}
	c.settle(before)
	if got, _ := c.traffic(); len(got) != 0 {
		t.Fatalf("api/traffic after the grace: %d apps, want none", len(got))
	}
}

// 10,000 instance ids, in 50 rounds of 20 new apps of 10 instances each,
// registered, requested once each and cancelled, 10 s apart: the series
// and api/traffic never hold more than the rounds within traffic.Grace,
// and end where they started, plus what is registered at the end.
func TestChurnLeavesSeriesWhereTheyStarted(t *testing.T) {
	const rounds, appsPerRound, perApp = 50, 20, 10
	const step = 10 * time.Second
	c := newChurn(t)
	startAll, _ := c.series()
	c.traffic()
	_, startSize := c.traffic()
	kept := int(traffic.Grace/step) + 1 // rounds whose counters may stay
	var roundSeries int
	var last []string
	for r := range rounds {
		apps := appNames(fmt.Sprintf("churn-%02d-", r), appsPerRound)
		c.registerAll(apps, perApp)
		c.requestAll(apps, perApp)
		if r == 0 {
			all, _ := c.series()
			roundSeries = all - startAll
		}
		if r == rounds-1 {
			last = apps // registered at the end
			break
		}
		c.cancelAll(apps, perApp)
		c.clock.Advance(step)
		c.g.sweep()
		all, n := c.series()
		if n > kept*appsPerRound*perApp || all > startAll+kept*roundSeries {
			t.Fatalf("round %d: %d instance series, %d in all; want at most %d and %d", r, n, all, kept*appsPerRound*perApp, startAll+kept*roundSeries)
		}
		if got, _ := c.traffic(); len(got) > kept*appsPerRound {
			t.Fatalf("round %d: api/traffic has %d apps, want at most %d", r, len(got), kept*appsPerRound)
		}
	}
	c.clock.Advance(traffic.Grace)
	c.g.sweep()
	if _, n := c.series(); n != appsPerRound*perApp {
		t.Errorf("at the end: %d instance series, want the %d registered", n, appsPerRound*perApp)
	}
	all := c.settle(startAll + roundSeries)
	got, size := c.traffic()
	if len(got) != appsPerRound {
		t.Errorf("api/traffic at the end: %d apps, want the %d registered", len(got), appsPerRound)
	}
	for _, a := range got {
		if !strings.HasPrefix(a.App, strings.ToUpper(last[0][:len("churn-49-")])) {
			t.Errorf("api/traffic at the end lists %s, not registered", a.App)
		}
	}
	t.Logf("series %d at the start, %d at the end (%d per round of %d instances); api/traffic %d bytes, then %d",
		startAll, all, roundSeries, appsPerRound*perApp, startSize, size)
}

// Apps whose breakers (the defaults') opened, then left: after
// traffic.Grace their breaker series are gone from /metrics with their
// other series, and nothing of them is left to show.
func TestDepartedBreakerSeriesDropped(t *testing.T) {
	c := newChurn(t)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	t.Cleanup(failing.Close)
	rules, err := routing.ParseRules("test", []byte("defaults:\n  breaker: {consecutive_failures: 1, open: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.g.Router().SetRules(rules)
	before, _ := c.series()
	apps := appNames("brk-", 20)
	for _, app := range apps {
		register(t, c.store, app, app+"-0", failing.Listener.Addr().(*net.TCPAddr).Port)
		for _, want := range []int{500, 503} {
			resp, err := c.client.Get(c.base + "/" + app + "/x")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Fatalf("/%s/x: %d, want %d", app, resp.StatusCode, want)
			}
		}
	}
	if n := strings.Count(c.scrape(t), "eureka_gateway_breaker_state{"); n != 20 {
		t.Fatalf("%d breaker_state series while registered, want 20", n)
	}
	c.cancelAll(apps, 1)
	c.g.sweep()
	c.clock.Advance(traffic.Grace)
	c.g.sweep()
	if m := c.scrape(t); strings.Contains(m, `eureka_gateway_breaker_`) {
		t.Errorf("breaker series of departed apps left:\n%s", m)
	}
	c.settle(before) // the loops' connections to them close at their tick
}
