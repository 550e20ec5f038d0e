package registry

import (
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// override is a status override set through PUT .../status. Like Eureka's
// Guava cache it expires after an hour without access; lastAccess moves on
// reads under the read lock, so it is atomic.
type override struct {
	status     eureka.Status
	lastAccess atomic.Int64 // ms
}

// overrideFor returns the live override of id, refreshing its idle timer.
// The caller holds s.mu (read or write).
func (s *Store) overrideFor(id string, now int64) (eureka.Status, bool) {
	o := s.overrides[id]
	if o == nil || now-o.lastAccess.Load() > s.cfg.OverrideIdleExpiry.Milliseconds() {
		return eureka.StatusUnknown, false
	}
	o.lastAccess.Store(now)
	return o.status, true
}

// setOverride stores an override. The caller holds the write lock.
func (s *Store) setOverride(id string, st eureka.Status, now int64) {
	o := &override{status: st}
	o.lastAccess.Store(now)
	s.overrides[id] = o
}

// expireOverrides drops overrides idle for longer than OverrideIdleExpiry.
func (s *Store) expireOverrides() {
	now := s.nowMillis()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, o := range s.overrides {
		if now-o.lastAccess.Load() > s.cfg.OverrideIdleExpiry.Milliseconds() {
			delete(s.overrides, id)
		}
	}
}

// Overrides returns the live status overrides by instance id, as
// GET /serverinfo/statusoverrides reports them.
func (s *Store) Overrides() map[string]eureka.Status {
	now := s.nowMillis()
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]eureka.Status, len(s.overrides))
	for id, o := range s.overrides {
		if now-o.lastAccess.Load() <= s.cfg.OverrideIdleExpiry.Milliseconds() {
			out[id] = o.status
		}
	}
	return out
}

// effectiveStatus applies Eureka's status override rules, first match wins
// (protocol doc 4.5):
//  1. a self-reported DOWN, STARTING or UNKNOWN is trusted;
//  2. an override in the map wins;
//  3. (AWS ASG rule: not applicable outside AWS);
//  4. for client calls, an existing lease's UP or OUT_OF_SERVICE is kept, so a
//     client's own UP does not undo a server-side OUT_OF_SERVICE;
//  5. otherwise the instance's own status.
//
// existing is the lease the instance had (nil if none). The caller holds
// s.mu.
func (s *Store) effectiveStatus(i *eureka.InstanceInfo, existing *lease, replication bool, now int64) eureka.Status {
	if i.Status != eureka.StatusUp && i.Status != eureka.StatusOutOfService {
		return i.Status
	}
	if st, ok := s.overrideFor(i.ID(), now); ok {
		return st
	}
	if !replication && existing != nil {
		if st := existing.info.Status; st == eureka.StatusUp || st == eureka.StatusOutOfService {
			return st
		}
	}
	return i.Status
}
