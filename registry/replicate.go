package registry

import (
	"github.com/eurekagate/eurekagate/eureka"
)

// Replicator receives the writes that peers must see: registrations,
// heartbeats, cancels, status updates and override deletions made by
// clients (never evictions, never writes that were themselves replicated).
// Replicate must not block.
type Replicator interface {
	Replicate(ReplicationItem)
}

// SetReplicator makes the Store hand its client writes to r. Set it before
// the Store takes traffic.
func (s *Store) SetReplicator(r Replicator) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replicator = r
}

// replicate passes it on, outside any lock.
func (s *Store) replicate(it *ReplicationItem) {
	if it != nil && s.replicator != nil {
		s.replicator.Replicate(*it)
	}
}

// registerItem is the Register task for a lease. The caller holds s.mu.
func (s *Store) registerItem(l *lease) *ReplicationItem {
	if s.replicator == nil {
		return nil
	}
	i := s.decorate(l)
	return &ReplicationItem{Action: ActionRegister, AppName: i.App, ID: i.ID(), LastDirtyTimestamp: i.LastDirtyTimestamp,
		Status: i.Status.String(), Instance: &i}
}

// heartbeatItem is the Heartbeat task for a lease, with the override the
// peers should hold. The caller holds s.mu.
func (s *Store) heartbeatItem(app, id string, l *lease, now int64) *ReplicationItem {
	if s.replicator == nil {
		return nil
	}
	it := &ReplicationItem{Action: ActionHeartbeat, AppName: app, ID: id, LastDirtyTimestamp: l.info.LastDirtyTimestamp,
		Status: l.info.Status.String()}
	if st, ok := s.overrideFor(id, now); ok {
		it.OverriddenStatus = st.String()
	}
	return it
}

// statusItem is a StatusUpdate or DeleteStatusOverride task. The caller
// holds s.mu.
func (s *Store) statusItem(action, app, id string, st eureka.Status, l *lease) *ReplicationItem {
	if s.replicator == nil {
		return nil
	}
	return &ReplicationItem{Action: action, AppName: app, ID: id, LastDirtyTimestamp: l.info.LastDirtyTimestamp, Status: st.String()}
}

// Adopt takes a peer's newer copy of an instance (the entity of a 409
// answer to a replicated heartbeat): its override, if any, and the
// instance itself, registered as a replication so it is not sent back.
func (s *Store) Adopt(i *eureka.InstanceInfo) error {
	if i.OverriddenStatus != eureka.StatusUnknown {
		s.mu.Lock()
		s.setOverride(i.ID(), i.OverriddenStatus, s.nowMillis())
		s.mu.Unlock()
	}
	return s.Register(i, true)
}
