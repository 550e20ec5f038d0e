package dashboard

import (
	"slices"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// api/traffic shows each app's requests a rate limit answered 429, as the
// counters have them at the last sample.
func TestTrafficLimited(t *testing.T) {
	rec := traffic.New()
	h, _, clock := newDashboard(t, Config{Traffic: rec})
	readTraffic(t, h)
	serve(rec, "ORDERS", "i-1", 3, 200, time.Millisecond)
	serve(rec, "ORDERS", "", 2, 429, time.Millisecond)
	rec.App("ORDERS").Limited()
	rec.App("ORDERS").Limited()
	clock.Advance(time.Second)
	if got := trafficOf(t, readTraffic(t, h), "ORDERS").Limited; got != 2 {
		t.Errorf("ORDERS' limited: %d, want 2", got)
	}
}

// api/traffic shows the state of each app's circuit breaker once it has
// moved, and the requests it refused.
func TestTrafficBreaker(t *testing.T) {
	rec := traffic.New()
	h, _, clock := newDashboard(t, Config{Traffic: rec})
	readTraffic(t, h)
	serve(rec, "ORDERS", "i-1", 3, 500, time.Millisecond)
	serve(rec, "BILLING", "i-1", 3, 200, time.Millisecond)
	rec.BreakerMoved("ORDERS", "", routing.BreakerOpen)
	clock.Advance(time.Second)
	v := readTraffic(t, h)
	if o := trafficOf(t, v, "ORDERS"); o.Breaker != "open" {
		t.Errorf("ORDERS' breaker: %q, want open", o.Breaker)
	}
	if b := trafficOf(t, v, "BILLING"); b.Breaker != "" {
		t.Errorf("BILLING without a breaker: %q", b.Breaker)
	}
}

// api/traffic lists the subsets whose own breaker (per_subset) is open
// or half-open, and not those closed again.
func TestTrafficOpenSubsets(t *testing.T) {
	rec := traffic.New()
	h, _, clock := newDashboard(t, Config{Traffic: rec})
	readTraffic(t, h)
	serve(rec, "ORDERS", "i-1", 3, 500, time.Millisecond)
	rec.BreakerMoved("ORDERS", "track=canary", routing.BreakerOpen)
	rec.BreakerMoved("ORDERS", "track=beta", routing.BreakerOpen)
	rec.BreakerMoved("ORDERS", "track=beta", routing.BreakerHalfOpen)
	rec.BreakerMoved("ORDERS", "track=gone", routing.BreakerOpen)
	rec.BreakerMoved("ORDERS", "track=gone", routing.BreakerClosed)
	clock.Advance(time.Second)
	o := trafficOf(t, readTraffic(t, h), "ORDERS")
	want := []SubsetBreaker{{Subset: "track=beta", Breaker: "half_open"}, {Subset: "track=canary", Breaker: "open"}}
	if !slices.Equal(o.OpenSubsets, want) {
		t.Errorf("open subsets %+v, want %+v", o.OpenSubsets, want)
	}
	if o.Breaker != "" {
		t.Errorf("the app's own breaker: %q, want none", o.Breaker)
	}
}
