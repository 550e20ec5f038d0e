package registry

import (
	"sync"
	"time"

	"github.com/eurekagate/eurekagate/internal/tick"
)

// loopGroup owns the Store's background goroutines.
type loopGroup struct {
	mu      sync.Mutex
	stop    chan struct{}
	done    sync.WaitGroup
	running bool
}

// Start runs the Store's background work until Stop: eviction every
// EvictionInterval, delta retention every DeltaRetentionCleanupInterval, the
// renewal threshold recount every RenewalThresholdUpdateInterval, prebuild
// every half PrebuildDelay, and, with remote regions, the held Mirror's
// DropStale (HoldMirror) every tenth of RemoteRegionRetention (at most
// DeltaRetentionCleanupInterval). It
// does not block. Calling Start on a running Store does nothing.
func (s *Store) Start() {
	g := &s.loops
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running {
		return
	}
	g.running = true
	g.stop = make(chan struct{})
	s.mu.Lock()
	s.lastEvict = s.clock.Now()
	s.mu.Unlock()
	s.every(s.cfg.EvictionInterval, func() { s.Evict() })
	s.every(s.cfg.DeltaRetentionCleanupInterval, s.PurgeDeltas)
	s.every(s.cfg.RenewalThresholdUpdateInterval, s.UpdateRenewalThreshold)
	if s.cfg.PrebuildDelay > 0 {
		s.every(max(s.cfg.PrebuildDelay/2, 10*time.Millisecond), s.prebuild)
	}
	if len(s.cfg.RemoteRegions) > 0 {
		// A region that stopped answering is dropped within a tenth of
		// the retention after it, not at the next delta cleanup.
		s.every(min(s.cfg.DeltaRetentionCleanupInterval, max(s.cfg.RemoteRegionRetention/10, 100*time.Millisecond)), s.dropStaleRegions)
	}
}

// Stop stops the background work and waits for it to finish.
func (s *Store) Stop() {
	g := &s.loops
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.running {
		return
	}
	close(g.stop)
	g.done.Wait()
	g.running = false
}

func (s *Store) every(d time.Duration, f func()) {
	g := &s.loops
	stop := g.stop
	g.done.Add(1)
	go func() {
		defer g.done.Done()
		tick.Every(d, stop, nil, f)
	}()
}
