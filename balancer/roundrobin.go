package balancer

import (
	"sync/atomic"

	"github.com/eurekagate/eurekagate/internal/perapp"
)

// RoundRobin takes an application's usable instances in turn, with one
// counter per application. It is the default policy. The zero value is
// ready to use; share one value (a pointer) between the callers that
// should rotate together.
//
// It is fair when some instances are skipped: like Caddy's round_robin, it
// spends a turn of the counter on each instance it skips, so that with
// three instances and the middle one ejected the other two get half the
// calls each (rather than the one after the ejected one getting two
// thirds).
type RoundRobin struct {
	counters perapp.Map[atomic.Uint64]
}

// Choose returns the next usable candidate in turn from c.StateKey()'s counter.
func (rr *RoundRobin) Choose(c Candidates) (int, bool) {
	n := uint64(c.Len())
	if n == 0 {
		return -1, false
	}
	counter := rr.counters.Get(c.StateKey())
	var turn uint64
	for range n {
		turn = counter.Add(1) - 1
		if i := int(turn % n); c.Usable(i) {
			return i, true
		}
	}
	// Concurrent callers took the turns in between, so this caller may
	// have seen only unusable candidates: look at each one once.
	for k := range n {
		if i := int((turn + 1 + k) % n); c.Usable(i) {
			return i, true
		}
	}
	return -1, false
}
