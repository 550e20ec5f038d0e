package registry

import (
	"github.com/eurekagate/eurekagate/eureka"
)

// Cancel removes the lease of (app, id) and its override, as a client does
// on shutdown, and records it as DELETED. It returns false if there was no
// lease. Each cancel lowers the expected renew count (protocol doc 4.4).
func (s *Store) Cancel(app, id string, replication bool) bool {
	s.mu.Lock()
	ok := s.cancelLocked(app, id, Cancelled, replication, s.nowMillis())
	s.mu.Unlock()
	s.deliver()
	return ok
}

// cancelLocked is Eureka's internalCancel, shared by Cancel and eviction
// (kind Cancelled or Evicted). The caller holds the write lock.
func (s *Store) cancelLocked(app, id string, kind ChangeKind, replication bool, now int64) bool {
	delete(s.overrides, id)
	a := s.apps[app]
	if a == nil {
		return false
	}
	l := a.leases[id]
	if l == nil {
		return false
	}
	delete(a.leases, id)
	if l.evicted == 0 {
		l.evicted = now
	}
	s.setHolder(a, l, nil)
	if kind == Cancelled {
		s.buryLocked(app, l, now) // evictions are not buried: the instance may come back by itself
	}
	info := l.info.Clone()
	info.ActionType = eureka.ActionDeleted
	info.LastUpdatedTimestamp = now
	l.info = info
	s.record(kind, app, l, false, replication, now)
	if len(a.leases) == 0 {
		delete(s.apps, app)
	}
	if s.expected > 0 {
		s.expected--
		s.updateThresholdLocked()
	}
	return true
}
