package dashboard

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
)

// Without remote regions, api/regions has this node's region and an empty
// list (the page hides the block).
func TestRegionsNone(t *testing.T) {
	h, _, _ := newDashboard(t, Config{})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/regions", nil))
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("api/regions: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if !strings.Contains(w.Body.String(), `"region":"us-east-1"`) || !strings.Contains(w.Body.String(), `"regions":[]`) {
		t.Errorf("api/regions without remote regions: %s", w.Body)
	}
}

// api/regions reports each remote region's state, apps, instances and the
// age of its last sync by the Store's clock, through its life: waiting,
// unreachable, ready, stale, dropped, ready again. The rest of the page
// stays local: api/summary, api/changes and api/charts hold only this
// region's instances.
func TestRegionsView(t *testing.T) {
	clock := testkit.NewFakeClock()
	store := registry.New(registry.Config{Clock: clock, Region: "us-east-1", RemoteRegionRetention: time.Minute,
		RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}, {Name: "ap-south"}, {Name: "us-west"}}})
	h := New(store, Config{})
	t.Cleanup(h.Close)
	testkit.MustRegister(t, store, testkit.Inst("ORDERS", "local-1"), false)

	read := func() RegionsView {
		t.Helper()
		var v RegionsView
		if code := get(t, h, context.Background(), "/api/regions", &v); code != 200 {
			t.Fatalf("api/regions: %d", code)
		}
		if v.Region != "us-east-1" || len(v.Regions) != 3 || v.Regions[0].Name != "eu-west" || v.Regions[1].Name != "ap-south" || v.Regions[2].Name != "us-west" {
			t.Fatalf("api/regions: %+v", v)
		}
		return v
	}
	age := func(r RegionView) int64 {
		if r.LastSyncAgeMS == nil {
			return -1
		}
		return *r.LastSyncAgeMS
	}

	v := read()
	for _, r := range v.Regions {
		if r.State != "waiting" || r.Ready || r.Instances != 0 || r.LastSyncAgeMS != nil || !r.LastSync.IsZero() {
			t.Errorf("before any read: %+v", r)
		}
	}

	remote := &eureka.Applications{Applications: []*eureka.Application{
		{Name: "ORDERS", Instances: []*eureka.InstanceInfo{testkit.Inst("ORDERS", "eu-1"), testkit.Inst("ORDERS", "eu-2")}},
		{Name: "BILLING", Instances: []*eureka.InstanceInfo{testkit.Inst("BILLING", "eu-3")}},
	}}
	synced := clock.Now()
	if err := regions.MirrorOf(store).Update("eu-west", remote, synced); err != nil {
		t.Fatal(err)
	}
	regions.MirrorOf(store).Failed("ap-south", clock.Now(), errors.New("connection refused"))
	clock.Advance(12 * time.Second)
	v = read()
	if eu := v.Regions[0]; eu.State != "ready" || !eu.Ready || eu.Apps != 2 || eu.Instances != 3 || age(eu) != 12000 ||
		!eu.LastSync.Equal(synced) || eu.Syncs != 1 || eu.Failures != 0 || eu.LastError != "" {
		t.Errorf("eu-west read: %+v (age %d)", eu, age(eu))
	}
	if ap := v.Regions[1]; ap.State != "unreachable" || ap.Ready || ap.Failures != 1 || ap.LastError != "connection refused" || ap.LastSyncAgeMS != nil {
		t.Errorf("ap-south failing: %+v", ap)
	}
	if us := v.Regions[2]; us.State != "waiting" {
		t.Errorf("us-west: %+v", us)
	}

	// The local data knows nothing of eu-west's three instances.
	var s Summary
	get(t, h, context.Background(), "/api/summary", &s)
	if len(s.Applications) != 1 || s.Applications[0].Name != "ORDERS" || len(s.Applications[0].Instances) != 1 || s.Applications[0].Instances[0].ID != "local-1" {
		t.Errorf("api/summary counts remote instances: %+v", s.Applications)
	}
	var c Changes
	get(t, h, context.Background(), "/api/changes?since=0&wait=0", &c)
	for _, u := range c.Updates {
		if u.ID != "local-1" {
			t.Errorf("api/changes has a remote instance: %+v", u)
		}
	}
	var ch Charts
	get(t, h, context.Background(), "/api/charts", &ch)
	if got := ch.Minutes[len(ch.Minutes)-1].Instances; got["UP"] != 1 || len(got) != 1 {
		t.Errorf("api/charts instances %v: want the one local", got)
	}

	// eu-west stops answering: stale (its last registry served), then
	// dropped past the retention, then ready again when it answers.
	regions.MirrorOf(store).Failed("eu-west", clock.Now(), errors.New("timeout"))
	if eu := read().Regions[0]; eu.State != "stale" || eu.Instances != 3 || eu.LastError != "timeout" || eu.Failures != 1 || !eu.LastAttempt.Equal(clock.Now()) {
		t.Errorf("eu-west failing: %+v", eu)
	}
	clock.Advance(time.Minute)
	regions.MirrorOf(store).DropStale()
	if eu := read().Regions[0]; eu.State != "dropped" || !eu.Dropped || eu.Instances != 0 || eu.Apps != 0 || age(eu) != 72000 {
		t.Errorf("eu-west dropped: %+v (age %d)", eu, age(eu))
	}
	if err := regions.MirrorOf(store).Update("eu-west", remote, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if eu := read().Regions[0]; eu.State != "ready" || eu.Dropped || eu.Instances != 3 || age(eu) != 0 || eu.Syncs != 2 {
		t.Errorf("eu-west back: %+v (age %d)", eu, age(eu))
	}
}

// The page has the block, hidden until api/regions lists a region, and
// its script.
func TestRegionsOnThePage(t *testing.T) {
	h, _, _ := newDashboard(t, Config{})
	for path, want := range map[string]string{
		"/":           `<section id="regions-section" aria-labelledby="regions-title" hidden>`,
		"/regions.js": `poll("api/regions"`,
		"/poll.js":    `fetch(typeof url === "function" ? url() : url`,
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		b, _ := io.ReadAll(w.Body)
		if w.Code != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d, lacks %s", path, w.Code, want)
		}
	}
}
