package registry

import (
	"github.com/eurekagate/eurekagate/eureka"
)

// SetStatus sets a status override on (app, id), as PUT .../status does
// (protocol doc 4.4): the lease is renewed, and if the status differs the
// override is stored, the status changed, the larger lastDirtyTimestamp
// kept and the change recorded as MODIFIED (a StatusSet change). If the
// status is already st, nothing is stored, not even the override, and
// nothing is recorded. It returns ErrNotFound for an unknown or expired
// instance. replication marks a write received from a peer.
func (s *Store) SetStatus(app, id string, st eureka.Status, lastDirty int64, replication bool) error {
	now := s.nowMillis()
	s.mu.Lock()
	err := s.setStatusLocked(app, id, st, lastDirty, replication, now)
	s.mu.Unlock()
	s.deliver()
	return err
}

func (s *Store) setStatusLocked(app, id string, st eureka.Status, lastDirty int64, replication bool, now int64) error {
	l, err := s.visibleLocked(app, id, now)
	if err != nil {
		return err
	}
	s.touch(l, now)
	if l.info.Status == st {
		return nil
	}
	if st == eureka.StatusUp && l.serviceUp == 0 {
		l.serviceUp = now
	}
	s.setOverride(id, st, now)
	info := l.info.Clone()
	info.OverriddenStatus = st
	info.Status = st
	info.LastDirtyTimestamp = max(info.LastDirtyTimestamp, lastDirty)
	s.modifiedLocked(StatusSet, app, l, info, replication, now)
	return nil
}

// DeleteStatusOverride removes the override of (app, id), as
// DELETE .../status does: the lease is renewed and, if an override existed,
// the status falls back to st (UNKNOWN if the caller gave none, which makes
// the client's next heartbeat 404 so that it re-registers with its real
// status), recorded as an OverrideDeleted change. It returns ErrNotFound
// for an unknown or expired instance.
func (s *Store) DeleteStatusOverride(app, id string, st eureka.Status, lastDirty int64, replication bool) error {
	now := s.nowMillis()
	s.mu.Lock()
	err := s.deleteStatusOverrideLocked(app, id, st, lastDirty, replication, now)
	s.mu.Unlock()
	s.deliver()
	return err
}

func (s *Store) deleteStatusOverrideLocked(app, id string, st eureka.Status, lastDirty int64, replication bool, now int64) error {
	l, err := s.visibleLocked(app, id, now)
	if err != nil {
		return err
	}
	s.touch(l, now)
	if _, live := s.overrideFor(id, now); !live {
		delete(s.overrides, id) // expired: as good as absent
		return nil
	}
	delete(s.overrides, id)
	info := l.info.Clone()
	info.OverriddenStatus = eureka.StatusUnknown
	info.Status = st
	info.LastDirtyTimestamp = max(info.LastDirtyTimestamp, lastDirty)
	s.modifiedLocked(OverrideDeleted, app, l, info, replication, now)
	return nil
}

// visibleLocked returns the lease of (app, id) if single-instance lookups
// see it, and ErrNotFound otherwise. The caller holds s.mu.
func (s *Store) visibleLocked(app, id string, now int64) (*lease, error) {
	l := s.lookup(app, id)
	if !s.visible(l, now) {
		return nil, ErrNotFound
	}
	return l, nil
}

// modifiedLocked installs a new holder and records it as MODIFIED.
func (s *Store) modifiedLocked(kind ChangeKind, app string, l *lease, info *eureka.InstanceInfo, replication bool, now int64) {
	info.ActionType = eureka.ActionModified
	info.LastUpdatedTimestamp = now
	s.setHolder(s.apps[app], l, info)
	s.record(kind, app, l, false, replication, now)
}
