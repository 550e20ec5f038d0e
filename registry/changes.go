package registry

import "sync/atomic"

// changeLog is Eureka's recentlyChangedQueue: every register, cancel,
// eviction and status change, in order, each pointing at the lease it
// changed. A delta renders each lease's current holder, so an instance
// registered and then cancelled within the window appears once, as DELETED.
type changeLog struct {
	entries []change
	purged  atomic.Uint64 // counts purges that dropped entries, so deltas rebuild
}

type change struct {
	at    int64 // ms
	lease *lease
}

func (c *changeLog) add(at int64, l *lease) {
	c.entries = append(c.entries, change{at: at, lease: l})
}

// purge drops entries older than cutoff from the head.
func (c *changeLog) purge(cutoff int64) bool {
	n := 0
	for n < len(c.entries) && c.entries[n].at < cutoff {
		n++
	}
	if n == 0 {
		return false
	}
	// Copy the survivors so the dropped leases can be collected.
	c.entries = append(make([]change, 0, len(c.entries)-n), c.entries[n:]...)
	c.purged.Add(1)
	return true
}

// PurgeDeltas drops changes older than DeltaRetention from the delta, as
// Eureka's retention task does every 30 s, and expires idle overrides.
func (s *Store) PurgeDeltas() {
	s.expireOverrides()
	cutoff := s.nowMillis() - s.cfg.DeltaRetention.Milliseconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changes.purge(cutoff)
}
