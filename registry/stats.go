package registry

// Stats reads the Store's running statistics, for metrics, the status
// page and the dashboard: its counters, its instances by status, the
// renews of the last minute, when it started and self-preservation's
// numbers. Store.Stats returns it.
type Stats struct{ s *Store }

// Stats returns the Store's statistics.
func (s *Store) Stats() Stats { return Stats{s} }
