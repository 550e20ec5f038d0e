package registry

import (
	"time"

	"go.uber.org/zap"
)

// SelfPreservation is the state behind Eureka's self-preservation mode.
type SelfPreservation struct {
	// Enabled is false when self-preservation is switched off.
	Enabled bool
	// ExpectedRenewingClients is Eureka's expectedNumberOfClientsSendingRenews.
	ExpectedRenewingClients int
	// Threshold is the renews per minute at or below which evictions stop.
	Threshold int
	// RenewsLastMinute is the number of renews in the previous full minute.
	RenewsLastMinute int64
	// Active reports that evictions are suspended right now.
	Active bool
}

// SelfPreservation returns the current self-preservation numbers.
func (s *Store) SelfPreservation() SelfPreservation {
	now := s.nowMillis()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return SelfPreservation{
		Enabled:                 !s.cfg.DisableSelfPreservation,
		ExpectedRenewingClients: s.expected,
		Threshold:               s.threshold,
		RenewsLastMinute:        s.renews.lastMinute(now),
		Active:                  !s.leaseExpirationEnabled(now),
	}
}

// updateThresholdLocked recomputes Eureka's numberOfRenewsPerMinThreshold:
// (int)(expected x 60/interval x percent).
func (s *Store) updateThresholdLocked() {
	perMin := 60 / s.cfg.ExpectedClientRenewalInterval.Seconds()
	s.threshold = int(float64(s.expected) * perMin * s.cfg.RenewalPercentThreshold)
}

// leaseExpirationEnabled is the self-preservation gate: evictions happen
// only while more renews arrived in the last minute than the threshold, or
// when self-preservation is off. The caller holds s.mu.
func (s *Store) leaseExpirationEnabled(now int64) bool {
	if s.cfg.DisableSelfPreservation {
		return true
	}
	return s.threshold > 0 && s.renews.lastMinute(now) > int64(s.threshold)
}

// SetExpectedRenewingClients sets the expected number of renewing clients,
// as Eureka's openForTraffic does after a start-up sync.
func (s *Store) SetExpectedRenewingClients(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expected = n
	s.updateThresholdLocked()
}

// UpdateRenewalThreshold is the 15-minute recount: the expected number of
// renewing clients becomes the number of registered instances if that is
// more than RenewalPercentThreshold of the current expectation (or
// self-preservation is off). A large drop, as in a network partition, is
// never adopted.
func (s *Store) UpdateRenewalThreshold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	count := s.lenLocked()
	if s.cfg.DisableSelfPreservation || float64(count) > s.cfg.RenewalPercentThreshold*float64(s.expected) {
		s.expected = count
		s.updateThresholdLocked()
	}
}

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
	defer s.mu.Unlock()
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
		if s.preserved {
			s.log.Info("self-preservation entered: evictions suspended", fields...)
		} else {
			s.log.Info("self-preservation left: evictions resumed", fields...)
		}
	}
	if !enabled {
		return nil
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
	evicted := make([]string, 0, toEvict)
	for n := range toEvict {
		// Partial Fisher-Yates: a uniform choice without replacement.
		j := n + s.cfg.Rand.IntN(len(expired)-n)
		expired[n], expired[j] = expired[j], expired[n]
		if s.cancelLocked(expired[n].app, expired[n].id, now) {
			evicted = append(evicted, expired[n].id)
			s.counters.evictions.Add(1)
			s.log.Info("instance evicted", zap.String("app", expired[n].app), zap.String("id", expired[n].id))
		}
	}
	return evicted
}

// StartedAt returns when the Store was created.
func (s *Store) StartedAt() time.Time { return s.started }
