package registry

import (
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
)

// SetStatus sets a status override on (app, id), as PUT .../status does
// (protocol doc 4.4): the lease is renewed, and if the status differs the
// override is stored, the status changed, the larger lastDirtyTimestamp
// kept and the change recorded as MODIFIED. If the status is already st,
// nothing is stored, not even the override. It returns ErrNotFound for an
// unknown or expired instance.
func (s *Store) SetStatus(app, id string, st eureka.Status, lastDirty int64, replication bool) error {
	it, err := s.setStatus(app, id, st, lastDirty)
	return s.replicated(replication, it, err)
}

// replicated hands a successful write's task to the peers, unless the write
// itself came from one.
func (s *Store) replicated(replication bool, it *ReplicationItem, err error) error {
	if err == nil && !replication {
		s.replicate(it)
	}
	return err
}

func (s *Store) setStatus(app, id string, st eureka.Status, lastDirty int64) (*ReplicationItem, error) {
	now := s.nowMillis()
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := s.visibleLocked(app, id, now)
	if err != nil {
		return nil, err
	}
	s.touch(l, now)
	if l.info.Status == st {
		return s.statusItem(ActionStatusUpdate, app, id, st, l), nil
	}
	if st == eureka.StatusUp && l.serviceUp == 0 {
		l.serviceUp = now
	}
	s.setOverride(id, st, now)
	s.log.Info("status override set", zap.String("app", app), zap.String("id", id), zap.Stringer("status", st))
	info := l.info.Clone()
	info.OverriddenStatus = st
	info.Status = st
	info.LastDirtyTimestamp = max(info.LastDirtyTimestamp, lastDirty)
	s.modifiedLocked(app, l, info, now)
	return s.statusItem(ActionStatusUpdate, app, id, st, l), nil
}

// DeleteStatusOverride removes the override of (app, id), as
// DELETE .../status does: the lease is renewed and, if an override existed,
// the status falls back to st (UNKNOWN if the caller gave none, which makes
// the client's next heartbeat 404 so that it re-registers with its real
// status). It returns ErrNotFound for an unknown or expired instance.
func (s *Store) DeleteStatusOverride(app, id string, st eureka.Status, lastDirty int64, replication bool) error {
	it, err := s.deleteStatusOverride(app, id, st, lastDirty)
	return s.replicated(replication, it, err)
}

func (s *Store) deleteStatusOverride(app, id string, st eureka.Status, lastDirty int64) (*ReplicationItem, error) {
	now := s.nowMillis()
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := s.visibleLocked(app, id, now)
	if err != nil {
		return nil, err
	}
	s.touch(l, now)
	if _, ok := s.overrides[id]; !ok {
		return s.statusItem(ActionDeleteStatusOverride, app, id, st, l), nil
	}
	delete(s.overrides, id)
	s.log.Info("status override deleted", zap.String("app", app), zap.String("id", id), zap.Stringer("status", st))
	info := l.info.Clone()
	info.OverriddenStatus = eureka.StatusUnknown
	info.Status = st
	info.LastDirtyTimestamp = max(info.LastDirtyTimestamp, lastDirty)
	s.modifiedLocked(app, l, info, now)
	return s.statusItem(ActionDeleteStatusOverride, app, id, st, l), nil
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
func (s *Store) modifiedLocked(app string, l *lease, info *eureka.InstanceInfo, now int64) {
	info.ActionType = eureka.ActionModified
	info.LastUpdatedTimestamp = now
	l.info = info
	s.changed(app, l, now)
}

// UpdateMetadata merges md into the metadata of (app, id), overwriting
// existing keys and removing none, then re-registers the instance as
// Eureka does (a new lease, recorded as ADDED); lastDirtyTimestamp is not
// changed. It returns ErrNotFound for an unknown or expired instance.
func (s *Store) UpdateMetadata(app, id string, md map[string]string) error {
	now := s.nowMillis()
	s.mu.Lock()
	l, err := s.visibleLocked(app, id, now)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	info := l.info.Clone()
	if info.Metadata == nil {
		info.Metadata = make(map[string]string, len(md))
	}
	for k, v := range md {
		info.Metadata[k] = v
	}
	it := s.registerItem(s.registerLocked(info, false, now))
	s.mu.Unlock()
	s.replicate(it) // as a Register, as Eureka does
	return nil
}
