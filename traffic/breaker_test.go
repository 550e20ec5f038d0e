package traffic

import (
	"testing"

	"github.com/eurekagate/eurekagate/routing"
)

// A breaker's moves and a budget's refusals are counted per app; a new
// router's breakers (BreakersClosed) show closed, the counts kept.
func TestBreakerCounts(t *testing.T) {
	r := New()
	r.BreakerMoved("ORDERS", routing.BreakerOpen)
	r.BreakerMoved("ORDERS", routing.BreakerHalfOpen)
	r.BreakerMoved("ORDERS", routing.BreakerOpen)
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
	none.BreakerMoved("ORDERS", routing.BreakerOpen)
	none.RetryDenied("ORDERS")
	none.BreakersClosed()
}
