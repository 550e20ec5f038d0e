package registry

import (
	"sync"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// RenewResult is the outcome of a heartbeat, which the API maps to a status
// code.
type RenewResult uint8

// The outcomes of Renew.
const (
	// RenewOK: the lease was renewed (200).
	RenewOK RenewResult = iota
	// RenewNotFound: no lease, an override deleted to UNKNOWN, or a client
	// that holds newer data than the server; the client must re-register
	// (404).
	RenewNotFound
	// RenewConflict: a peer replicated a heartbeat older than this server's
	// copy; it gets this server's instance back to sync from (409).
	RenewConflict
	// RenewCancelled: a peer replicated a heartbeat of an instance this
	// server saw cancelled, no newer than the cancel; the peer missed the
	// cancel and should drop its copy (410).
	RenewCancelled
)

// RenewRequest carries the optional query parameters of a heartbeat.
type RenewRequest struct {
	// LastDirtyTimestamp is the client's version of its data; 0 skips the
	// comparison.
	LastDirtyTimestamp int64
	// OverriddenStatus is sent by replicating peers that hold an override.
	OverriddenStatus eureka.Status
	// Replication marks a heartbeat replicated from a peer.
	Replication bool
}

// Renew records a heartbeat for (app, id) with Eureka's rules (protocol doc
// 4.3 and 2.2 (6)). On RenewConflict it also returns this server's copy of
// the instance.
//
// The common case takes only the read lock: the lease's renew time and the
// renew counter are atomics. A heartbeat is not a change unless the
// override rules change the status (a Renewed change); heartbeat
// subscribers (OnHeartbeat) hear of every one that found a lease.
func (s *Store) Renew(app, id string, req RenewRequest) (RenewResult, *eureka.InstanceInfo) {
	now := s.nowMillis()
	s.mu.RLock()
	l := s.lookup(app, id)
	if l == nil {
		buried := req.Replication && s.buried(app, id, req.LastDirtyTimestamp)
		s.mu.RUnlock()
		if buried {
			return RenewCancelled, nil
		}
		return RenewNotFound, nil
	}
	st := s.effectiveStatus(l.info, l, req.Replication, now)
	if st == eureka.StatusUnknown {
		s.mu.RUnlock()
		return RenewNotFound, nil
	}
	if st != l.info.Status {
		// An override changed the status: a rare write. Eureka changes it
		// silently; we record it so deltas stay consistent with full fetches.
		s.mu.RUnlock()
		res, conflict, hb, listened := s.renewWithStatus(app, id, req, now)
		s.deliver()
		s.heartbeat(hb, listened)
		return res, conflict
	}
	s.renewLease(l, now)
	res, conflict := s.compareDirty(l, req, now)
	hb, listened := s.heartbeatOf(app, id, l, req, now)
	s.mu.RUnlock()
	if res == RenewNotFound && req.Replication && req.OverriddenStatus != eureka.StatusUnknown {
		s.adoptReplicatedOverride(app, id, req.OverriddenStatus, now)
		s.deliver()
	}
	s.heartbeat(hb, listened)
	return res, conflict
}

func (s *Store) renewWithStatus(app, id string, req RenewRequest, now int64) (RenewResult, *eureka.InstanceInfo, Heartbeat, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lookup(app, id)
	if l == nil {
		return RenewNotFound, nil, Heartbeat{}, false
	}
	st := s.effectiveStatus(l.info, l, req.Replication, now)
	if st == eureka.StatusUnknown {
		return RenewNotFound, nil, Heartbeat{}, false
	}
	if st != l.info.Status {
		info := l.info.Clone()
		info.Status = st
		info.ActionType = eureka.ActionModified
		info.LastUpdatedTimestamp = now
		s.setHolder(s.apps[app], l, info)
		s.record(Renewed, app, l, false, req.Replication, now)
	}
	s.renewLease(l, now)
	res, conflict := s.compareDirty(l, req, now)
	if res == RenewNotFound && req.Replication && req.OverriddenStatus != eureka.StatusUnknown {
		s.adoptOverrideLocked(app, id, l, req.OverriddenStatus, now)
	}
	hb, listened := s.heartbeatOf(app, id, l, req, now)
	return res, conflict, hb, listened
}

// adoptReplicatedOverride stores the override a peer sent with a heartbeat
// that this server answered 404 because the peer's data is newer.
func (s *Store) adoptReplicatedOverride(app, id string, st eureka.Status, now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adoptOverrideLocked(app, id, s.lookup(app, id), st, now)
}

// adoptOverrideLocked stores a peer's override and puts it on the holder
// of l, if there is a lease, recording an OverrideAdopted change. The
// caller holds the write lock and delivers.
func (s *Store) adoptOverrideLocked(app, id string, l *lease, st eureka.Status, now int64) {
	s.setOverride(id, st, now)
	if l != nil && l.info.OverriddenStatus != st {
		info := l.info.Clone()
		info.OverriddenStatus = st
		s.setHolder(s.apps[app], l, info)
		s.record(OverrideAdopted, app, l, false, true, now)
	}
}

// renewLease moves the lease's renew time and counts the renew.
func (s *Store) renewLease(l *lease, now int64) {
	s.touch(l, now)
	s.renews.add(now)
	s.counters.renewals.Add(1)
}

// touch moves the lease's renew time without counting a renew, as Eureka's
// status endpoints do.
func (s *Store) touch(l *lease, now int64) {
	if s.cfg.LegacyLeaseExpiry {
		l.lastRenew.Store(now + l.duration)
	} else {
		l.lastRenew.Store(now)
	}
}

// compareDirty applies the lastDirtyTimestamp check of a heartbeat.
func (s *Store) compareDirty(l *lease, req RenewRequest, now int64) (RenewResult, *eureka.InstanceInfo) {
	if req.LastDirtyTimestamp == 0 || !s.visible(l, now) {
		return RenewOK, nil
	}
	stored := l.info.LastDirtyTimestamp
	switch {
	case req.LastDirtyTimestamp > stored:
		return RenewNotFound, nil
	case req.LastDirtyTimestamp < stored && req.Replication:
		i := s.decorate(l)
		return RenewConflict, &i
	}
	return RenewOK, nil
}

// RenewsLastMinute returns the number of renews counted in the previous
// full minute, as Eureka's MeasuredRate reports it.
func (st Stats) RenewsLastMinute() int64 { return st.s.renews.lastMinute(st.s.nowMillis()) }

// minuteCounter counts events per wall-clock minute. Reads return the count
// of the previous full minute. The current minute's count is an atomic; the
// roll to a new minute takes a mutex once a minute.
type minuteCounter struct {
	minute  atomic.Int64 // the minute cur counts
	cur     atomic.Int64
	prev    atomic.Int64 // the count of minute-1
	rolling sync.Mutex
}

func (c *minuteCounter) add(now int64) {
	m := now / 60000
	if c.minute.Load() != m {
		c.roll(m)
	}
	c.cur.Add(1)
}

func (c *minuteCounter) roll(m int64) {
	c.rolling.Lock()
	defer c.rolling.Unlock()
	old := c.minute.Load()
	if old >= m {
		return
	}
	if old == m-1 {
		c.prev.Store(c.cur.Load())
	} else {
		c.prev.Store(0)
	}
	c.cur.Store(0)
	c.minute.Store(m)
}

func (c *minuteCounter) lastMinute(now int64) int64 {
	m := now / 60000
	switch c.minute.Load() {
	case m:
		return c.prev.Load()
	case m - 1:
		return c.cur.Load()
	}
	return 0
}
