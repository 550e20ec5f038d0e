package registry

import "errors"

// ErrCancelled is returned for a replicated registration of an instance
// this registry saw cancelled, when the registration is no newer than the
// cancelled one (its lastDirtyTimestamp is not greater): a stale write from
// a peer that missed the cancel. The REST API answers it 410 Gone.
var ErrCancelled = errors.New("registry: instance was cancelled")

// tombstone remembers a cancelled instance for DeltaRetention, so that an
// older heartbeat or registration a peer replicates late (a node paused or
// partitioned while the cancel happened) cannot bring it back. Eureka has
// no such guard; a cancel wins over anything no newer than it.
type tombstone struct {
	dirty int64 // the cancelled copy's lastDirtyTimestamp
	at    int64 // ms
}

func tombstoneKey(app, id string) string { return app + "/" + id }

// buryLocked records the tombstone of a cancelled lease. The caller holds
// the write lock.
func (s *Store) buryLocked(app string, l *lease, now int64) {
	if s.tombstones == nil {
		s.tombstones = map[string]tombstone{}
	}
	s.tombstones[tombstoneKey(app, l.info.ID())] = tombstone{dirty: l.info.LastDirtyTimestamp, at: now}
}

// buried reports whether a write with lastDirtyTimestamp dirty is no newer
// than a cancel of (app, id) still remembered. The caller holds s.mu.
func (s *Store) buried(app, id string, dirty int64) bool {
	t, ok := s.tombstones[tombstoneKey(app, id)]
	return ok && dirty <= t.dirty
}

// purgeTombstonesLocked forgets the cancels older than cutoff (ms). The
// caller holds the write lock.
func (s *Store) purgeTombstonesLocked(cutoff int64) {
	for k, t := range s.tombstones {
		if t.at < cutoff {
			delete(s.tombstones, k)
		}
	}
}
