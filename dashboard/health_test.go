package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/traffic"
)

// api/summary and api/traffic carry what the gateway's balancer
// (Config.Health) knows: an ejected instance is marked "ejected", since
// when, until when and why, in the Applications data and in its app's
// traffic, listed there first though it took no request; the requests
// for names nobody registered are Unrouted, never an app named unknown.
func TestHealthMarksAndUnrouted(t *testing.T) {
	rec := traffic.New()
	clock := testkit.NewFakeClock()
	store := registry.New(registry.Config{Clock: clock})
	b := balancer.New(store, balancer.Config{MaxFails: 1, Cooldown: 30 * time.Second, Now: clock.Now})
	h := New(store, Config{Traffic: rec, Health: b})
	t.Cleanup(h.Close)
	register(t, store, "ORDERS", "o1")
	register(t, store, "ORDERS", "o2")
	readTraffic(t, h) // the first sample
	o2 := store.Instances("ORDERS")[1]
	since := clock.Now()
	b.ReportTimeout(o2)
	serve(rec, "ORDERS", "o1", 10, 200, time.Millisecond)
	serve(rec, traffic.Unknown, "", 30, 404, time.Millisecond)
	for n := range 30 {
		rec.Unrouted([]string{"NOBODY", "NOBODY", "ORDRS"}[n%3])
	}
	clock.Advance(time.Second)

	var s Summary
	if code := get(t, h, t.Context(), "/api/summary", &s); code != 200 {
		t.Fatalf("api/summary: %d", code)
	}
	for _, i := range s.Applications[0].Instances {
		switch {
		case i.ID == "o1" && (i.Ejected != nil || i.FailingHealthCheck != nil):
			t.Errorf("o1 marked: %+v", i.OutOfRotation)
		case i.ID == "o2" && (i.Ejected == nil || i.Ejected.Since != since.UnixMilli() ||
			i.Ejected.Until != since.Add(30*time.Second).UnixMilli() || i.Ejected.Reason != "timeout"):
			t.Errorf("o2: %+v", i.Ejected)
		}
	}

	v := readTraffic(t, h)
	if got := appOrder(v); got != "ORDERS" {
		t.Errorf("apps %q: the names nobody registered are not an app", got)
	}
	o := trafficOf(t, v, "ORDERS")
	if len(o.Instances) != 2 || o.Instances[0].ID != "o2" || o.Instances[0].Ejected == nil || o.Instances[0].Requests != 0 ||
		o.Instances[1].ID != "o1" || o.Instances[1].Ejected != nil || o.InstanceCount != 2 {
		t.Errorf("ORDERS' instances: %+v", o.Instances)
	}
	if u := v.Unrouted; u.LastMinute.Requests != 30 || len(u.Names) != 2 ||
		u.Names[0] != (UnroutedName{"NOBODY", 20}) || u.Names[1] != (UnroutedName{"ORDRS", 10}) {
		t.Errorf("unrouted: %+v", v.Unrouted)
	}
	if len(v.OutOfRotation) != 1 || v.OutOfRotation[0].App != "ORDERS" || v.OutOfRotation[0].ID != "o2" || v.OutOfRotation[0].Ejected == nil {
		t.Errorf("out of rotation: %+v", v.OutOfRotation)
	}

	// A success brings it back: no mark.
	b.ReportSuccess(o2)
	clock.Advance(time.Second)
	v = readTraffic(t, h)
	if len(v.OutOfRotation) != 0 || strings.Contains(appOrder(v), "unknown") {
		t.Errorf("after a success: %+v", v.OutOfRotation)
	}
}

// An instance failing its active health check is marked
// failing_health_check, since when and why, in api/summary and in
// api/traffic's out_of_rotation, and not once it passes.
func TestHealthMarksFailingCheck(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	health := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer health.Close()
	store := registry.New(registry.Config{})
	checker := balancer.NewChecker(store, balancer.CheckConfig{Interval: 50 * time.Millisecond})
	checker.Start()
	defer checker.Stop()
	b := balancer.New(store, balancer.Config{Checker: checker})
	h := New(store, Config{Traffic: traffic.New(), Health: b})
	t.Cleanup(h.Close)
	inst := testkit.Inst("ORDERS", "o1")
	inst.HealthCheckURL = health.URL + "/health"
	testkit.MustRegister(t, store, inst, false)
	b.Pick("ORDERS") // the balancer has the checker check ORDERS

	marked := func() *FailingCheck {
		var s Summary
		get(t, h, t.Context(), "/api/summary", &s)
		return s.Applications[0].Instances[0].FailingHealthCheck
	}
	testkit.Eventually(t, 5*time.Second, "o1 marked failing its health check", func() bool { return marked() != nil })
	if f := marked(); f.Since == 0 || !strings.Contains(f.Reason, "503") {
		t.Errorf("failing_health_check: %+v", f)
	}
	if v := readTraffic(t, h); len(v.OutOfRotation) != 1 || v.OutOfRotation[0].FailingHealthCheck == nil || v.OutOfRotation[0].Ejected != nil {
		t.Errorf("out of rotation: %+v", v.OutOfRotation)
	}
	failing.Store(false)
	testkit.Eventually(t, 5*time.Second, "the mark gone once o1 passes", func() bool { return marked() == nil })
}
