package registry

import (
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
)

// Cancel removes the lease of (app, id) and its override, as a client does
// on shutdown, and records it as DELETED. It returns false if there was no
// lease. Each cancel lowers the expected renew count (protocol doc 4.4).
func (s *Store) Cancel(app, id string, replication bool) bool {
	s.mu.Lock()
	if !s.cancelLocked(app, id, s.nowMillis()) {
		s.mu.Unlock()
		return false
	}
	s.counters.cancels.Add(1)
	var it *ReplicationItem
	if !replication && s.replicator != nil {
		it = &ReplicationItem{Action: ActionCancel, AppName: app, ID: id}
	}
	s.mu.Unlock()
	s.log.Info("instance cancelled", zap.String("app", app), zap.String("id", id), zap.Bool("replication", replication))
	s.replicate(it)
	return true
}

// cancelLocked is Eureka's internalCancel, shared by Cancel and eviction.
// The caller holds the write lock.
func (s *Store) cancelLocked(app, id string, now int64) bool {
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
	info := l.info.Clone()
	info.ActionType = eureka.ActionDeleted
	info.LastUpdatedTimestamp = now
	l.info = info
	s.changed(app, l, now)
	if len(a.leases) == 0 {
		delete(s.apps, app)
	}
	if s.expected > 0 {
		s.expected--
		s.updateThresholdLocked()
	}
	return true
}
