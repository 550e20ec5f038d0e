package registry

// SelfPreservation is the state behind Eureka's self-preservation mode.
type SelfPreservation struct {
	// Enabled is false when self-preservation is switched off.
	Enabled bool `json:"enabled"`
	// ExpectedRenewingClients is Eureka's expectedNumberOfClientsSendingRenews.
	ExpectedRenewingClients int `json:"expected_renewing_clients"`
	// Threshold is the renews per minute at or below which evictions stop.
	Threshold int `json:"threshold"`
	// RenewsLastMinute is the number of renews in the previous full minute.
	RenewsLastMinute int64 `json:"renews_last_minute"`
	// Active reports that evictions are suspended right now.
	Active bool `json:"active"`
}

// SelfPreservation returns the current self-preservation numbers.
func (st Stats) SelfPreservation() SelfPreservation {
	s := st.s
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
