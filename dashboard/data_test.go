package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/internal/version"
	"github.com/eurekagate/eurekagate/registry"
)

func newDashboard(t *testing.T, cfg Config) (*Handler, *registry.Store, *testkit.FakeClock) {
	t.Helper()
	clock := testkit.NewFakeClock()
	store := registry.New(registry.Config{Clock: clock})
	h := New(store, cfg)
	t.Cleanup(h.Close)
	return h, store, clock
}

// get serves one request and decodes its JSON answer into out.
func get(t *testing.T, h http.Handler, ctx context.Context, url string, out any) int {
	t.Helper()
	req := httptest.NewRequestWithContext(ctx, "GET", url, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code == http.StatusOK && out != nil {
		if err := json.Unmarshal(w.Body.Bytes(), out); err != nil {
			t.Fatalf("%s: %v: %s", url, err, w.Body)
		}
	}
	return w.Code
}

func renew(t *testing.T, store *registry.Store, app, id string, times int) {
	t.Helper()
	for range times {
		if r, _ := store.Renew(app, id, registry.RenewRequest{}); r != registry.RenewOK {
			t.Fatalf("renew %s: %v", id, r)
		}
	}
}

// The charts' endpoint returns 15 minutes and the current one, per
// minute: registrations, cancels and evictions from the change stream,
// renews against the threshold, instances by status, and a marker where
// self-preservation ended and where it started again. The page is open
// throughout (one read per minute); the clock is a fake one.
func TestChartsSeries(t *testing.T) {
	h, store, clock := newDashboard(t, Config{})
	read := func() Charts {
		var c Charts
		if code := get(t, h, context.Background(), "/api/charts", &c); code != 200 {
			t.Fatalf("charts: %d", code)
		}
		return c
	}
	t0 := clock.Now().UnixMilli() // a minute's start

	// The page reads at each minute's start and half-way through it.
	halfway := func() {
		clock.Advance(30 * time.Second)
		read()
		clock.Advance(30 * time.Second)
		read()
	}

	// Minute 0: four register (threshold int(5 x 2 x 0.85) = 8) and renew
	// 12 times; self-preservation holds at first (no renews yet).
	for _, id := range []string{"o-1", "o-2", "o-3", "o-4"} {
		testkit.MustRegister(t, store, testkit.Inst("ORDERS", id), false)
	}
	read()
	for _, id := range []string{"o-1", "o-2", "o-3"} {
		renew(t, store, "ORDERS", id, 4)
	}
	halfway()
	// Minute 1: 12 renews > 8 ended it. One cancels (threshold 6); 9 renews.
	store.Cancel("ORDERS", "o-4", false)
	for _, id := range []string{"o-1", "o-2", "o-3"} {
		renew(t, store, "ORDERS", id, 3)
	}
	halfway()
	// Minute 2: o-3 stops renewing; 8 renews > 6.
	renew(t, store, "ORDERS", "o-1", 4)
	renew(t, store, "ORDERS", "o-2", 4)
	halfway()
	// Minute 3: o-3's lease (90 s) has expired and is evicted (threshold
	// 5); no renews.
	if got := store.Evict(); len(got) != 1 || got[0] != "o-3" {
		t.Fatalf("evicted %v", got)
	}
	halfway()
	// Minute 4: 0 renews <= 5: self-preservation started again.
	clock.Advance(5 * time.Second)
	c := read()

	if len(c.Minutes) != 16 || c.MinuteMS != 60000 || c.Started != t0 {
		t.Fatalf("%d minutes of %d ms, started %d", len(c.Minutes), c.MinuteMS, c.Started)
	}
	m := c.Minutes[11:] // minutes 0 to 4
	for k, b := range m {
		if b.Start != t0+int64(k)*60000 {
			t.Fatalf("minute %d starts at %d", k, b.Start)
		}
	}
	for k, b := range c.Minutes[:11] {
		if b.Registered+b.Cancelled+b.Evicted != 0 || b.Renews != nil || b.Threshold != nil || b.Instances != nil {
			t.Errorf("minute %d before the start: %+v", k-11, b)
		}
	}
	counts := func(b MinuteStats) [3]int { return [3]int{b.Registered, b.Cancelled, b.Evicted} }
	if counts(m[0]) != [3]int{4, 0, 0} || counts(m[1]) != [3]int{0, 1, 0} || counts(m[2]) != [3]int{} || counts(m[3]) != [3]int{0, 0, 1} {
		t.Errorf("registered, cancelled, evicted per minute: %v %v %v %v", counts(m[0]), counts(m[1]), counts(m[2]), counts(m[3]))
	}
	wantRenews := []int64{12, 9, 8, 0}
	for k, want := range wantRenews {
		if m[k].Renews == nil || *m[k].Renews != want {
			t.Errorf("renews in minute %d: %v, want %d", k, m[k].Renews, want)
		}
	}
	if m[4].Renews != nil {
		t.Errorf("renews of the current minute: %d, want null", *m[4].Renews)
	}
	wantThreshold := []int{8, 6, 6, 5, 5}
	wantSP := []bool{true, false, false, false, true}
	for k := range m {
		if m[k].Threshold == nil || *m[k].Threshold != wantThreshold[k] {
			t.Errorf("threshold in minute %d: %v, want %d", k, m[k].Threshold, wantThreshold[k])
		}
		if m[k].SelfPreservation == nil || *m[k].SelfPreservation != wantSP[k] {
			t.Errorf("self-preservation in minute %d: %v, want %v", k, m[k].SelfPreservation, wantSP[k])
		}
	}
	if got := m[4].Instances; len(got) != 1 || got["UP"] != 2 {
		t.Errorf("instances by status now: %v", got)
	}
	if len(c.Markers) != 2 || c.Markers[0] != (Marker{At: t0 + 60000, Kind: "ended", RenewsLastMinute: 12, Threshold: 8}) ||
		c.Markers[1].At != t0+4*60000 || c.Markers[1].Kind != "started" {
		t.Errorf("markers: %+v", c.Markers)
	}

	// Fifteen minutes on, the first minutes and their markers are gone.
	clock.Advance(13 * time.Minute)
	c = read()
	if c.Minutes[0].Start != t0+2*60000 || len(c.Markers) != 1 {
		t.Errorf("after 12 more minutes: first minute %d, markers %+v", (c.Minutes[0].Start-t0)/60000, c.Markers)
	}
}

// A minute in which nobody read the dashboard and nothing changed has no
// renew count; the change stream's counts are complete regardless.
func TestChartsUnsampledMinutes(t *testing.T) {
	h, store, clock := newDashboard(t, Config{})
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-1"), false)
	renew(t, store, "ORDERS", "o-1", 5)
	clock.Advance(2 * time.Minute)
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-2"), false)
	var c Charts
	get(t, h, context.Background(), "/api/charts", &c)
	m := c.Minutes[13:]
	if m[0].Registered != 1 || m[2].Registered != 1 {
		t.Errorf("registrations: %+v", m)
	}
	if m[0].Renews != nil || m[1].Renews == nil || *m[1].Renews != 0 {
		t.Errorf("renews: minute 0 %v (no sample in minute 1), minute 1 %v", m[0].Renews, m[1].Renews)
	}
}

// The summary carries the version it reflects and the recent changes.
func TestSummaryVersionAndRecent(t *testing.T) {
	h, store, _ := newDashboard(t, Config{})
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-1"), false)
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-2"), false)
	store.Cancel("ORDERS", "o-2", false)
	var s Summary
	get(t, h, context.Background(), "/api/summary", &s)
	if s.RegistryVersion != store.Version() || s.RegistryVersion != 3 {
		t.Errorf("registry_version %d, store %d", s.RegistryVersion, store.Version())
	}
	if len(s.Recent) != 3 || s.Recent[2].Kind != "cancelled" || s.Recent[2].ID != "o-2" || s.Recent[0].Version != 1 {
		t.Errorf("recent: %+v", s.Recent)
	}
	if len(s.Applications) != 1 || len(s.Applications[0].Instances) != 1 || s.Applications[0].Instances[0].LastHeartbeat == 0 {
		t.Errorf("applications: %+v", s.Applications)
	}
	if s.Version != version.String() || s.Version == "" {
		t.Errorf("version %q, want the module's %q", s.Version, version.String())
	}
}

// A registry in self-preservation seconds after its first registration
// says why that is normal; one that has run for long does not.
func TestFreshRegistryExplainsSelfPreservation(t *testing.T) {
	h, store, clock := newDashboard(t, Config{})
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-1"), false)
	var s Summary
	get(t, h, context.Background(), "/api/summary", &s)
	if !s.SelfPreservation.Active || !strings.Contains(s.Explanation, "normal") {
		t.Errorf("fresh registry: active %v, explanation %q", s.SelfPreservation.Active, s.Explanation)
	}
	for range 5 { // instances heartbeat for minutes, fewer than expected
		clock.Advance(time.Minute)
		renew(t, store, "ORDERS", "o-1", 1)
	}
	get(t, h, context.Background(), "/api/summary", &s)
	if s.SelfPreservation.Active && strings.Contains(s.Explanation, "normal") {
		t.Errorf("after minutes: %q", s.Explanation)
	}
}

// api/changes returns each changed instance once, at its last state, the
// changes for the feed, and the heartbeats of the apps asked for.
func TestChangesSince(t *testing.T) {
	h, store, clock := newDashboard(t, Config{})
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-1"), false)
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-2"), false)
	since := store.Version()

	var c Changes
	get(t, h, context.Background(), "/api/changes?since=2&wait=0", &c) // no wait given would be the default's
	if c.Reset || len(c.Updates) != 0 || len(c.Changes) != 0 || c.RegistryVersion != since {
		t.Fatalf("nothing new: %+v", c)
	}

	clock.Advance(10 * time.Second)
	testkit.MustRegister(t, store, testkit.Inst("INVENTORY", "i-1"), false)
	if err := store.SetStatus("ORDERS", "o-1", eureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	store.Cancel("ORDERS", "o-2", false)
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-2"), false)
	store.Cancel("INVENTORY", "i-1", false)
	renew(t, store, "ORDERS", "o-1", 1)

	c = Changes{}
	get(t, h, context.Background(), "/api/changes?since=2&apps=ORDERS,nope", &c)
	if c.Reset || c.RegistryVersion != store.Version() || c.RegistryVersion != 7 {
		t.Fatalf("version %d, reset %v", c.RegistryVersion, c.Reset)
	}
	type got struct {
		app, id, status string
		removed         bool
	}
	var updates []got
	for _, u := range c.Updates {
		g := got{app: u.App, id: u.ID, removed: u.Removed}
		if u.Instance != nil {
			g.status = u.Instance.Status
		}
		updates = append(updates, g)
	}
	want := []got{{"ORDERS", "o-1", "OUT_OF_SERVICE", false}, {"ORDERS", "o-2", "UP", false}, {"INVENTORY", "i-1", "", true}}
	if len(updates) != len(want) {
		t.Fatalf("updates %+v", updates)
	}
	for k := range want {
		if updates[k] != want[k] {
			t.Errorf("update %d: %+v, want %+v", k, updates[k], want[k])
		}
	}
	kinds := ""
	for _, e := range c.Changes {
		kinds += e.Kind + " "
	}
	if kinds != "registered status_set cancelled registered cancelled " {
		t.Errorf("feed: %s", kinds)
	}
	if hb := c.Heartbeats["ORDERS"]; len(c.Heartbeats) != 1 || hb["o-1"] != clock.Now().UnixMilli() || len(hb) != 2 {
		t.Errorf("heartbeats: %v (now %d)", c.Heartbeats, clock.Now().UnixMilli())
	}

	// A version of another registry, or one older than the changes kept,
	// tells the page to load the summary again.
	c = Changes{}
	get(t, h, context.Background(), "/api/changes?since=99", &c)
	if !c.Reset {
		t.Error("a version from the future: no reset")
	}
	clock.Advance(4 * time.Minute)
	store.PurgeDeltas()
	c = Changes{}
	get(t, h, context.Background(), "/api/changes?since=2", &c)
	if !c.Reset || c.RegistryVersion != store.Version() {
		t.Errorf("changes no longer kept: reset %v, version %d", c.Reset, c.RegistryVersion)
	}
	for _, bad := range []string{"/api/changes", "/api/changes?since=x", "/api/changes?since=1&wait=-1"} {
		if code := get(t, h, context.Background(), bad, nil); code != 400 {
			t.Errorf("%s: %d", bad, code)
		}
	}
}

// A long poll returns as soon as a change arrives, when its request ends
// (the server shuts down), when the dashboard is closed, and at its bound.
func TestChangesLongPoll(t *testing.T) {
	h, store, _ := newDashboard(t, Config{MaxWait: 300 * time.Millisecond})
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-1"), false)

	poll := func(ctx context.Context, h http.Handler) (Changes, time.Duration) {
		var c Changes
		start := time.Now()
		get(t, h, ctx, "/api/changes?since=1&wait=30", &c)
		return c, time.Since(start)
	}

	// The bound: MaxWait, not the 30 s asked for.
	if c, took := poll(context.Background(), h); len(c.Updates) != 0 || took < 250*time.Millisecond || took > 5*time.Second {
		t.Errorf("bounded wait: %d updates after %v", len(c.Updates), took)
	}

	// A change ends the wait.
	h2 := New(store, Config{MaxWait: time.Minute})
	defer h2.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(50 * time.Millisecond)
		testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-2"), false)
	}()
	c, took := poll(context.Background(), h2)
	<-done
	if len(c.Updates) != 1 || c.Updates[0].ID != "o-2" || took > 10*time.Second {
		t.Errorf("after a change: %+v in %v", c.Updates, took)
	}

	// The request's end ends it (fasthttp cancels it at shutdown).
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	var c3 Changes
	start := time.Now()
	get(t, h2, ctx, "/api/changes?since=2&wait=30", &c3)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a cancelled request waited %v", took)
	}

	// Closing the dashboard ends it.
	time.AfterFunc(50*time.Millisecond, h2.Close)
	start = time.Now()
	get(t, h2, context.Background(), "/api/changes?since=2&wait=30", &c3)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a closed dashboard's poll waited %v", took)
	}
}

// api/changes follows the Store's one long-poll rule (registry.ParseWait,
// registry.Poll): a wait as seconds or as a duration, none given is the
// default wait (bounded by MaxWait), and a stale version resets at once
// whatever the wait.
func TestChangesWaitRule(t *testing.T) {
	h, store, _ := newDashboard(t, Config{MaxWait: 100 * time.Millisecond})
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-1"), false)
	for _, url := range []string{"/api/changes?since=1", "/api/changes?since=1&wait=0.05", "/api/changes?since=1&wait=50ms", "/api/changes?since=1&wait=1m"} {
		var c Changes
		start := time.Now()
		if code := get(t, h, context.Background(), url, &c); code != 200 || c.Reset || len(c.Updates) != 0 || c.RegistryVersion != 1 {
			t.Errorf("%s: %d %+v", url, code, c)
		}
		if took := time.Since(start); took < 40*time.Millisecond || took > 10*time.Second {
			t.Errorf("%s: answered after %v", url, took)
		}
	}
	for _, url := range []string{"/api/changes?since=5&wait=1m", "/api/changes?since=5"} {
		var c Changes
		start := time.Now()
		if code := get(t, h, context.Background(), url, &c); code != 200 || !c.Reset || c.RegistryVersion != 1 {
			t.Errorf("%s: %d %+v", url, code, c)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: a reset waited %v", url, took)
		}
	}
	for _, bad := range []string{"/api/changes?since=1&wait=-1s", "/api/changes?since=1&wait=soon", "/api/changes?since=1&wait=NaN"} {
		if code := get(t, h, context.Background(), bad, nil); code != 400 {
			t.Errorf("%s: %d", bad, code)
		}
	}
}

// Start runs one sampler that Close stops (goleak checks it is gone), and
// Close unsubscribes: later changes no longer reach the feed.
func TestStartClose(t *testing.T) {
	h, store, _ := newDashboard(t, Config{})
	h.Start()
	h.Start()
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-1"), false)
	h.Close()
	h.Close()
	h.Start() // after Close: nothing
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "o-2"), false)
	if r := h.rec.recent(); len(r) != 1 {
		t.Errorf("feed after Close: %+v", r)
	}
}
