package registry

import "sync/atomic"

// changeLog is the retained tail of the change stream: every change of the
// last DeltaRetention, in version order. It is Eureka's
// recentlyChangedQueue too: a delta renders each changed lease's current
// state once. Appends and purges happen under the Store's write lock;
// entries are never modified once appended, so a reader may keep a
// sub-slice after releasing the lock.
type changeLog struct {
	entries []Change
	// base is the version just before entries[0]: every change up to it
	// has been purged, so a reader at a version below base missed some.
	base   uint64
	purged atomic.Uint64 // counts purges that dropped entries, so deltas rebuild
}

func (c *changeLog) add(ch Change) {
	if len(c.entries) == 0 {
		c.base = ch.Version - 1
	}
	c.entries = append(c.entries, ch)
}

// after returns the retained changes with a version above v and at most
// upTo, and false if some change above v is no longer retained.
func (c *changeLog) after(v, upTo uint64) ([]Change, bool) {
	if v < c.base {
		return nil, false
	}
	if len(c.entries) == 0 || v >= upTo {
		return nil, true
	}
	from := int(v - c.base) // versions are dense: entries[k].Version == base+1+k
	to := min(int(upTo-c.base), len(c.entries))
	if from >= to {
		return nil, true
	}
	return c.entries[from:to:to], true
}

// purge drops entries older than cutoff (ms) from the head.
func (c *changeLog) purge(cutoff int64) bool {
	n := 0
	for n < len(c.entries) && c.entries[n].At < cutoff {
		n++
	}
	if n == 0 {
		return false
	}
	c.base = c.entries[n-1].Version
	// Copy the survivors so the dropped leases can be collected; readers
	// holding the old array keep their view.
	c.entries = append(make([]Change, 0, len(c.entries)-n), c.entries[n:]...)
	c.purged.Add(1)
	return true
}

// PurgeDeltas drops changes older than DeltaRetention from the log (and so
// from the delta), as Eureka's retention task does every 30 s, forgets the
// cancels of that age, expires idle overrides, and drops the remote
// regions' changes of that age and the regions that stopped answering
// (the Mirror held, HoldMirror).
func (s *Store) PurgeDeltas() {
	s.expireOverrides()
	cutoff := s.nowMillis() - s.cfg.DeltaRetention.Milliseconds()
	s.ageMirror(cutoff)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changes.purge(cutoff)
	s.purgeTombstonesLocked(cutoff)
}
