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
func (s *Store) Evict() []string {
	nowT := s.clock.Now()
	now := nowT.UnixMilli()
	s.mu.Lock()
	evicted, note := s.evictLocked(nowT, now)
	s.mu.Unlock()
	s.deliver()
	if note != nil {
		note()
	}
	return evicted
}

// evictLocked is Evict under the write lock. note, if not nil, logs a
// self-preservation transition once the lock is released.
func (s *Store) evictLocked(nowT time.Time, now int64) (evicted []string, note func()) {
	var additional int64
	if !s.lastEvict.IsZero() {
		additional = max(0, nowT.Sub(s.lastEvict).Milliseconds()-s.cfg.EvictionInterval.Milliseconds())
	}
	s.lastEvict = nowT
	enabled := s.leaseExpirationEnabled(now)
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
	if !enabled {
		return nil, note
	}
	type key struct{ app, id string }
	var expired []key
	size := 0
	for app, a := range s.apps {
		size += len(a.leases)
		for id, l := range a.leases {
			if s.expiredAt(l, now, additional) {
				expired = append(expired, key{app, id})
			}
		}
	}
	limit := size - int(float64(size)*s.cfg.RenewalPercentThreshold)
	toEvict := min(len(expired), limit)
	evicted = make([]string, 0, toEvict)
	for n := range toEvict {
		// Partial Fisher-Yates: a uniform choice without replacement.
		j := n + s.cfg.Rand.IntN(len(expired)-n)
		expired[n], expired[j] = expired[j], expired[n]
		if s.cancelLocked(expired[n].app, expired[n].id, Evicted, false, now) {
			evicted = append(evicted, expired[n].id)
		}
	}
	return evicted, note
}

// StartedAt returns when the Store was created.
func (s *Store) StartedAt() time.Time { return s.started }
