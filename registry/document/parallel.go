package document

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers returns how many goroutines a build encodes and
// compresses on: one fewer than GOMAXPROCS, and at least one. With every
// P busy, Go's scheduler takes up a connection's next request only when
// a goroutine is preempted (10 ms) or blocks, so a build on every CPU
// held heartbeats up to hundreds of milliseconds while a million
// instances were encoded; with one P free they are answered at once.
func Workers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// inParallel calls work for every k below n, on Workers goroutines
// (in the caller's when n is below least or there is one worker), each
// with a scratch buffer of its own, and returns when all calls have.
func inParallel(n, least int, work func(k int, scratch *[]byte)) {
	workers := min(Workers(), n)
	if n < least || workers <= 1 {
		// A change's few chunks, one stale app: no goroutine to start.
		var scratch []byte
		for k := range n {
			work(k, &scratch)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch []byte
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				work(k, &scratch)
			}
		}()
	}
	wg.Wait()
}
