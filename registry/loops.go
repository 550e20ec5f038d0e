package registry

import (
	"sync"
	"time"
)

// loopGroup owns the Store's background goroutines.
type loopGroup struct {
	mu      sync.Mutex
	stop    chan struct{}
	done    sync.WaitGroup
	running bool
}

// Start runs the Store's background work until Stop: eviction every
// EvictionInterval, delta retention every DeltaRetentionCleanupInterval, and
// the renewal threshold recount every RenewalThresholdUpdateInterval. It
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
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				f()
			}
		}
	}()
}
