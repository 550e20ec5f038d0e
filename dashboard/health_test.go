package dashboard

import (
	"strings"
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
