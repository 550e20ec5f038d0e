package replication

import "time"

// PeerStats is one peer's replication state.
type PeerStats struct {
	URL         string    `json:"url"`
	QueueLength int       `json:"queue_length"`
	BatchesSent uint64    `json:"batches_sent"`
	Failures    uint64    `json:"failures"`
	Dropped     uint64    `json:"dropped"`
	LastSuccess time.Time `json:"last_success"`
	LastError   string    `json:"last_error,omitempty"`
	// Down is true from a failed batch until the next delivered one.
	Down bool `json:"down"`
}

// Stats returns each peer's replication state.
func (p *Peers) Stats() []PeerStats {
	if p == nil {
		return nil
	}
	members := p.current()
	out := make([]PeerStats, 0, len(members))
	for _, pe := range members {
		if pe.self.Load() {
			continue
		}
		out = append(out, pe.stats())
	}
	return out
}

func (pe *peer) stats() PeerStats {
	s := PeerStats{URL: pe.url.Base, QueueLength: pe.length(), BatchesSent: pe.sent.Load(), Failures: pe.failures.Load(),
		Dropped: pe.dropped.Load(), Down: pe.down.Load()}
	if ns := pe.lastSuccess.Load(); ns > 0 {
		s.LastSuccess = time.Unix(0, ns)
	}
	s.LastError, _ = pe.lastError.Load().(string)
	return s
}
