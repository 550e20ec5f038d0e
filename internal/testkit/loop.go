package testkit

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Loop runs f over and over on each of workers goroutines (f gets the
// worker's number) until the returned stop is called, which waits for
// them: a steady load or a reader racing the writes of a test. stop may
// be called more than once.
func Loop(workers int, f func(worker int)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				f(w)
			}
		}()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}

// InParallel runs f once on each of workers goroutines (f gets the
// worker's number) and returns when every one has returned: writers and
// readers racing each other in a test.
func InParallel(workers int, f func(worker int)) {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w)
		}()
	}
	wg.Wait()
}

// TickUntilEnd calls f every d, in a goroutine of its own, until the test
// ends: a load at a steady pace. The cleanup cancels f's context and waits
// for its last call.
func TickUntilEnd(t testing.TB, d time.Duration, f func(ctx context.Context)) {
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			f(ctx)
		}
	})
	t.Cleanup(func() { stop(); wg.Wait() })
}
