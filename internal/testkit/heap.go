package testkit

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eurekagate/eurekagate/internal/tick"
)

// HeapGrowth runs f and returns how far the heap in use rose above where
// it was before, sampled every few milliseconds and once f returns. The collector runs often
// meanwhile, so that garbage does not count as growth.
func HeapGrowth(f func()) uint64 {
	old := debug.SetGCPercent(10)
	defer debug.SetGCPercent(old)
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base := m.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapAlloc > peak.Load() {
			peak.Store(m.HeapAlloc)
		}
	}
	go func() {
		defer wg.Done()
		tick.Every(5*time.Millisecond, stop, nil, sample)
	}()
	f()
	close(stop)
	wg.Wait()
	sample() // what f left, however quick it was
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}
