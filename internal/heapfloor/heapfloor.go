// Package heapfloor keeps Go's garbage collector from running before the
// heap has grown by a floor past the live heap. With GOGC's default of
// 100 a collection runs once the heap has doubled, so a process whose
// live heap is a few MiB (a gateway beside a small registry) collects
// dozens of times a second under load, and each collection also empties
// the sync.Pools its requests draw from. Past the floor GOGC's rule
// applies: a registry of a million instances collects as it would
// without one.
//
// The floor is kept by setting the collector's percentage, at Start and
// after collections, to 100×floor/live when that is above GOGC's
// default. The live heap is the one the last collection left, so while
// it grows fast the next collection may come later than GOGC's rule
// would have it; a memory limit (GOMEMLIMIT, debug.SetMemoryLimit)
// bounds the heap all the same, and the floor is never more than a
// quarter of it.
package heapfloor

import (
	"errors"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// ErrPercentSet is Start's answer when the collector's percentage is
// the user's: the GOGC environment variable is set, or the percentage is
// not GOGC's default (debug.SetGCPercent). It is kept.
var ErrPercentSet = errors.New("the garbage collector's percentage is set (GOGC or debug.SetGCPercent)")

// defaultPercent is GOGC's default, the least the floor sets.
const defaultPercent = 100

// minHeap is the runtime's least heap goal at GOGC's default, which it
// scales with the percentage (4 MiB × percent/100): the live heap the
// percentage is figured on is never taken as less, or that least goal
// would exceed the floor.
const minHeap = 4 << 20

// maxPercent bounds the percentage (a floor of 40 GiB over the least
// heap), so that the runtime's least goal, scaled by it, cannot overflow.
const maxPercent = 1 << 20

// Floor is one Start's floor, until its Stop.
type Floor struct {
	bytes uint64
}

// started holds the floors started and not stopped, oldest first: the
// last one applies, and the collections' hook runs while there is one.
// chain numbers the hook: a hook left from before a Stop and a Start,
// its cleanup still to run, ends instead of arming a second.
var started struct {
	sync.Mutex
	floors []*Floor
	chain  int
	armed  int // sentinels whose cleanup has not run yet
}

// Start keeps a floor of bytes from now until Stop. A floor started
// later applies in place of the earlier ones until it stops (a Caddy
// reload's new config starts before the old one stops); when the last
// stops, the percentage goes back to GOGC's default. When the percentage
// is the user's, Start keeps nothing and returns ErrPercentSet, its only
// error; a
// debug.SetGCPercent while a floor is kept is undone at the next
// collection.
func Start(bytes uint64) (*Floor, error) {
	started.Lock()
	defer started.Unlock()
	if len(started.floors) == 0 {
		if os.Getenv("GOGC") != "" || gcPercent() != defaultPercent {
			return nil, ErrPercentSet
		}
		started.chain++
		arm(started.chain)
	}
	f := &Floor{bytes: bytes}
	started.floors = append(started.floors, f)
	apply()
	return f, nil
}

// Stop ends the floor; stopping it again does nothing.
func (f *Floor) Stop() {
	started.Lock()
	defer started.Unlock()
	for i, g := range started.floors {
		if g == f {
			started.floors = append(started.floors[:i], started.floors[i+1:]...)
			apply()
			return
		}
	}
}

// apply sets the percentage the floor that applies asks for with the
// live heap the last collection left, or GOGC's default when no floor
// is left, under started's lock. Setting it takes the runtime's heap
// lock, not a stop of the world.
func apply() {
	p := defaultPercent
	if n := len(started.floors); n > 0 {
		p = percent(started.floors[n-1].bytes, liveHeap(), debug.SetMemoryLimit(-1))
	}
	debug.SetGCPercent(p)
}

// percent is the collector's percentage that lets a live heap of live
// bytes grow by floor, at most a quarter of the memory limit, before the
// next collection: never under GOGC's default.
func percent(floor, live uint64, limit int64) int {
	if limit < math.MaxInt64 {
		floor = min(floor, uint64(max(limit, 0))/4)
	}
	p := 100 * float64(floor) / float64(max(live, minHeap))
	return int(min(max(p, defaultPercent), maxPercent))
}

// arm sets the hook on the next collection: a cleanup of an object
// nothing refers to, which runs once a collection has found it so (on
// the runtime's cleanup goroutines, apart from finalizers) and arms the
// next. A collection that comes while the hook of the one before has not
// run yet has none of its own.
func arm(chain int) {
	started.armed++
	runtime.AddCleanup(new(sentinel), afterCollection, chain)
}

// sentinel is what arm's cleanup waits on: a pointer, so that it is an
// object of its own (the runtime batches small objects without one).
type sentinel struct{ _ *byte }

// collected, when set (by this package's tests: a hook on each call),
// is called after each collection's percentage is set.
var collected func()

func afterCollection(chain int) {
	started.Lock()
	started.armed--
	if len(started.floors) == 0 || chain != started.chain {
		started.Unlock()
		return
	}
	apply()
	done := collected
	arm(chain)
	started.Unlock()
	if done != nil {
		done()
	}
}

// liveHeap is the heap the last collection marked live (0 before the
// first).
func liveHeap() uint64 { return readUint64("/gc/heap/live:bytes") }

// gcPercent is the collector's percentage now.
func gcPercent() int { return int(readUint64("/gc/gogc:percent")) }

func readUint64(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
