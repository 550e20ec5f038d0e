package registry

import (
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// counters are the Store's running totals, for metrics. Registrations,
// cancels and evictions are counted from the change stream; renewals on
// the heartbeat path, since heartbeats are not changes.
type counters struct {
	registrations, renewals, cancels, evictions atomic.Uint64
	fullFetches, deltaFetches, appFetches       atomic.Uint64
	vipFetches                                  atomic.Uint64
	watchesHeld                                 atomic.Int64 // long polls waiting (await)
}

// apply counts one change.
func (c *counters) apply(ch *Change) {
	switch ch.Kind {
	case Registered, MetadataUpdated:
		c.registrations.Add(1)
	case Cancelled:
		c.cancels.Add(1)
	case Evicted:
		c.evictions.Add(1)
	}
}

// Totals is a snapshot of the Store's counters since it was created.
type Totals struct {
	// Registrations counts registrations, re-registrations and replicated
	// ones (metadata updates re-register too).
	Registrations uint64
	// Renewals counts heartbeats that renewed a lease.
	Renewals uint64
	// Cancels and Evictions count removed leases.
	Cancels, Evictions uint64
	// FullFetches, DeltaFetches, AppFetches and VIPFetches count the
	// payloads served (calls of Documents' Full, Delta, App and VIP).
	FullFetches, DeltaFetches, AppFetches, VIPFetches uint64
	// WatchesHeld is how many long polls (Poll, watch) are waiting for a
	// change now: a gauge, not a total.
	WatchesHeld int64
}

// Totals returns the Store's counters.
func (st Stats) Totals() Totals {
	c := &st.s.counters
	return Totals{
		Registrations: c.registrations.Load(), Renewals: c.renewals.Load(),
		Cancels: c.cancels.Load(), Evictions: c.evictions.Load(),
		FullFetches: c.fullFetches.Load(), DeltaFetches: c.deltaFetches.Load(),
		AppFetches: c.appFetches.Load(), VIPFetches: c.vipFetches.Load(),
		WatchesHeld: c.watchesHeld.Load(),
	}
}

// StatusCounts counts the instances of each app by status.
func (st Stats) StatusCounts() map[string]eureka.StatusCounts {
	s := st.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]eureka.StatusCounts, len(s.apps))
	for name, a := range s.apps {
		out[name] = a.counts
	}
	return out
}
