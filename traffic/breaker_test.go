package traffic

import (
	"testing"

	"github.com/eurekagate/eurekagate/routing"
)

// A breaker's moves and a budget's refusals are counted per app; a new
// router's breakers (BreakersClosed) show closed, the counts kept.
func TestBreakerCounts(t *testing.T) {
	r := New()
	r.BreakerMoved("ORDERS", "", routing.BreakerOpen)
	r.BreakerMoved("ORDERS", "", routing.BreakerHalfOpen)
	r.BreakerMoved("ORDERS", "", routing.BreakerOpen)
	r.RetryDenied("ORDERS")
	want := BreakerSnapshot{State: routing.BreakerOpen, Moves: [3]uint64{0, 2, 1}, RetriesDenied: 1}
	if got := r.App("ORDERS").Snapshot().Breaker; got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
	r.BreakersClosed()
	want.State = routing.BreakerClosed
	if got := r.App("ORDERS").Snapshot().Breaker; got != want {
		t.Errorf("after BreakersClosed: %+v, want %+v", got, want)
	}
	var none *Recorder
	none.BreakerMoved("ORDERS", "", routing.BreakerOpen)
	none.RetryDenied("ORDERS")
	none.BreakersClosed()
}

// A subset's breaker (per_subset) is counted apart from the app's, by
// its label; BreakersClosed closes it too.
func TestSubsetBreakerCounts(t *testing.T) {
	r := New()
	r.BreakerMoved("ORDERS", "track=canary", routing.BreakerOpen)
	s := r.App("ORDERS").Snapshot()
	if s.Breaker != (BreakerSnapshot{}) {
		t.Errorf("the app's breaker: %+v, want untouched", s.Breaker)
	}
	want := BreakerSnapshot{State: routing.BreakerOpen, Moves: [3]uint64{0, 1, 0}}
	if got := s.SubsetBreakers["track=canary"]; got != want || len(s.SubsetBreakers) != 1 {
		t.Errorf("%+v, want track=canary: %+v", s.SubsetBreakers, want)
	}
	r.BreakersClosed()
	if got := r.App("ORDERS").Snapshot().SubsetBreakers["track=canary"].State; got != routing.BreakerClosed {
		t.Errorf("after BreakersClosed: %v", got)
	}
}
