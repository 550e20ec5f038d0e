package gateway

import (
	"runtime"
	"sync"
)

// The loops wait for events in epoll_wait, a system call during which
// each holds one of the runtime's Ps (GOMAXPROCS of them). With every P
// held by a waiting loop, the runtime's sysmon takes a loop's P away
// once it has waited 20 µs, for the rest of the process, wakes a thread
// to spin on it, and keeps polling every 20 µs instead of backing off;
// the loop wakes to find its P gone and takes another. One P more than
// the loops leaves one idle, and sysmon then leaves a waiting loop its P:
// sysmon fell from 11% to 2% of the every-feature gateway's CPU in a
// profile (docs/performance.md).

var procs struct {
	sync.Mutex
	base int // GOMAXPROCS before a Server first raised it; 0 until then
}

// defaultLoops is how many loops a Server runs by default: GOMAXPROCS as
// the process had it before a Server made room for its loops, so that a
// second Server does not count the first one's room.
func defaultLoops() int {
	procs.Lock()
	defer procs.Unlock()
	if procs.base > 0 {
		return procs.base
	}
	return runtime.GOMAXPROCS(0)
}

// roomForLoops raises GOMAXPROCS to n+1 when it is n or fewer.
func roomForLoops(n int) {
	procs.Lock()
	defer procs.Unlock()
	cur := runtime.GOMAXPROCS(0)
	if cur > n {
		return
	}
	if procs.base == 0 {
		procs.base = cur
	}
	runtime.GOMAXPROCS(n + 1)
}
