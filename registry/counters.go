package registry

import "sync/atomic"

// counters are the Store's running totals, for metrics.
type counters struct {
	registrations, renewals, cancels, evictions atomic.Uint64
	fullFetches, deltaFetches, appFetches       atomic.Uint64
	vipFetches                                  atomic.Uint64
}

// Totals is a snapshot of the Store's counters since it was created.
type Totals struct {
	Registrations, Renewals, Cancels, Evictions uint64
	FullFetches, DeltaFetches, AppFetches       uint64
	VIPFetches                                  uint64
}

// Totals returns the Store's counters.
func (s *Store) Totals() Totals {
	c := &s.counters
	return Totals{
		Registrations: c.registrations.Load(), Renewals: c.renewals.Load(),
		Cancels: c.cancels.Load(), Evictions: c.evictions.Load(),
		FullFetches: c.fullFetches.Load(), DeltaFetches: c.deltaFetches.Load(),
		AppFetches: c.appFetches.Load(), VIPFetches: c.vipFetches.Load(),
	}
}

// PayloadSizes returns the size in bytes of the last serialized full
// registry and delta, by format ("json", "xml"); 0 for one not built yet.
func (s *Store) PayloadSizes() (full, delta map[string]int) {
	full, delta = map[string]int{}, map[string]int{}
	for f, name := range []string{"xml", "json"} {
		if p := s.payloads.full[f].Load(); p != nil {
			full[name] = len(p.Body)
		}
		if p := s.payloads.delta[f].Load(); p != nil {
			delta[name] = len(p.Body)
		}
	}
	return full, delta
}
