package registry

import "github.com/eurekagate/eurekagate/eureka"

// Heartbeat is a renew that found its lease: what a peer needs to renew
// its own copy (Eureka replicates every heartbeat, not only those that
// change something, so heartbeats are not part of the change stream).
type Heartbeat struct {
	// App (upper case) and ID name the instance.
	App, ID string
	// LastDirtyTimestamp and Status are this registry's copy's.
	LastDirtyTimestamp int64
	Status             eureka.Status
	// OverriddenStatus is the live override, UNKNOWN if none.
	OverriddenStatus eureka.Status
	// Replicated is true for a heartbeat that came from a peer.
	Replicated bool
}

// OnHeartbeat calls f after every heartbeat that found its lease, outside
// the Store's locks, on the heartbeating goroutine, each listener in the
// order it came: f must be quick and must not block. Any number may
// listen (peer replication is one, an embedder's counter another); the
// function returned stops f, and only f. With none listening a heartbeat
// costs one atomic load more, and no Heartbeat is built; with listeners,
// one Heartbeat is built per heartbeat on the stack (an override lookup,
// no allocation) and each costs its call.
func (s *Store) OnHeartbeat(f func(Heartbeat)) (stop func()) {
	return s.heartbeats.add(f)
}

// heartbeatOf builds the Heartbeat for l, and reports whether anyone
// listens. The caller holds s.mu.
func (s *Store) heartbeatOf(app, id string, l *lease, req RenewRequest, now int64) (Heartbeat, bool) {
	if s.heartbeats.load() == nil {
		return Heartbeat{}, false
	}
	hb := Heartbeat{App: app, ID: id, LastDirtyTimestamp: l.info.LastDirtyTimestamp, Status: l.info.Status,
		Replicated: req.Replication}
	if st, ok := s.overrideFor(id, now); ok {
		hb.OverriddenStatus = st
	}
	return hb, true
}

// heartbeat hands hb to the listeners, if heartbeatOf found any.
func (s *Store) heartbeat(hb Heartbeat, listened bool) {
	if !listened {
		return
	}
	for _, sub := range s.heartbeats.load() {
		sub.f(hb)
	}
}
