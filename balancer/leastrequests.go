package balancer

import (
	"sync/atomic"

	"github.com/eurekagate/eurekagate/internal/perapp"
)

// LeastRequests takes the usable instance with the fewest calls in
// progress, and among those that tie, the next in turn, with one counter
// per application. The counts are the caller's: a Balancer counts the
// calls started with Balancer.Begin (HTTPClient does so for each request),
// Caddy's eureka_least_requests counts every proxied request. With no
// call counted it is round-robin. The zero value is ready to use.
type LeastRequests struct {
	counters perapp.Map[atomic.Uint64]
}

// Choose returns the next usable candidate in turn among those with the
// fewest calls in progress.
func (lr *LeastRequests) Choose(c Candidates) (int, bool) {
	least, ties, first := 0, 0, -1
	for i := range c.Len() {
		if !c.Usable(i) {
			continue
		}
		switch n := c.InFlight(i); {
		case first < 0 || n < least:
			least, ties, first = n, 1, i
		case n == least:
			ties++
		}
	}
	if ties == 0 {
		return -1, false
	}
	k := int((lr.counters.Get(c.StateKey()).Add(1) - 1) % uint64(ties))
	for i := first; i < c.Len(); i++ {
		if c.Usable(i) && c.InFlight(i) == least {
			if k == 0 {
				return i, true
			}
			k--
		}
	}
	return first, true // the counts moved meanwhile
}
