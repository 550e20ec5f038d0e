package registry

import (
	"time"

	"go.uber.org/zap"
)

// Evict removes expired leases as Eureka's eviction task does (protocol doc
// 4.12), and returns the ids it removed. Nothing is evicted while
// self-preservation holds. A run that comes later than EvictionInterval
// after the previous one extends every lease by the lateness, so a paused
// process does not evict everyone at once. At most (1 - RenewalPercentThreshold)
// of the registry is evicted per run, chosen at random across apps.
// Evictions are recorded as DELETED and are never replicated.
//
// The expired leases are found under the read lock, which heartbeats share,
// and removed in batches of evictBatch under the write lock, so a large
// run never holds the lock long enough to stall a heartbeat; a lease renewed
// or replaced meanwhile is spared.
func (s *Store) Evict() []string {
	s.evictMu.Lock()
	defer s.evictMu.Unlock()
	nowT := s.clock.Now()
	now := nowT.UnixMilli()
	s.mu.Lock()
	additional, enabled, note := s.evictionGateLocked(nowT, now)
	s.mu.Unlock()
	if note != nil {
		note()
	}
	if !enabled {
		return nil
	}
	expired, size := s.expiredLeases(now, additional)
	limit := size - int(float64(size)*s.cfg.RenewalPercentThreshold)
	toEvict := min(len(expired), limit)
	for n := range toEvict {
		// Partial Fisher-Yates: a uniform choice without replacement.
		j := n + s.cfg.Rand.IntN(len(expired)-n)
		expired[n], expired[j] = expired[j], expired[n]
	}
	evicted := make([]string, 0, toEvict)
	for from := 0; from < toEvict; from += evictBatch {
		batch := expired[from:min(from+evictBatch, toEvict)]
		s.mu.Lock()
		for _, e := range batch {
			if s.lookup(e.app, e.id) == e.lease && s.expiredAt(e.lease, now, additional) &&
				s.cancelLocked(e.app, e.id, Evicted, false, now) {
				evicted = append(evicted, e.id)
			}
		}
		s.mu.Unlock()
		s.deliver()
	}
	return evicted
}

// evictBatch is how many leases an eviction run removes per hold of the
// write lock.
const evictBatch = 256

type expiredLease struct {
	app, id string
	lease   *lease
}

// evictionGateLocked moves the eviction clock and decides whether leases
// may expire now. note, if not nil, logs a self-preservation transition
// once the lock is released. The caller holds the write lock.
func (s *Store) evictionGateLocked(nowT time.Time, now int64) (additional int64, enabled bool, note func()) {
	if !s.lastEvict.IsZero() {
		additional = max(0, nowT.Sub(s.lastEvict).Milliseconds()-s.cfg.EvictionInterval.Milliseconds())
	}
	s.lastEvict = nowT
	enabled = s.leaseExpirationEnabled(now)
	if enabled == s.preserved {
		s.preserved = !enabled
		fields := []zap.Field{zap.Int64("renews_last_minute", s.renews.lastMinute(now)), zap.Int("threshold", s.threshold),
			zap.Int("expected_renewing_clients", s.expected)}
		msg := "self-preservation left: evictions resumed"
		if s.preserved {
			msg = "self-preservation entered: evictions suspended"
		}
		note = func() { s.log.Info(msg, fields...) }
	}
	return additional, enabled, note
}

// expiredLeases lists the leases expired at now (with additional ms of
// grace) and counts the registry, under the read lock.
func (s *Store) expiredLeases(now, additional int64) (expired []expiredLease, size int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for app, a := range s.apps {
		size += len(a.leases)
		for id, l := range a.leases {
			if s.expiredAt(l, now, additional) {
				expired = append(expired, expiredLease{app, id, l})
			}
		}
	}
	return expired, size
}

// StartedAt returns when the Store was created.
func (st Stats) StartedAt() time.Time { return st.s.started }
