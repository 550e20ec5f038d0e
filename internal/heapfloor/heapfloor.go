// Package heapfloor keeps Go's garbage collector from running before the
// heap has grown by a floor past the live heap. With GOGC's default of
// 100 a collection runs once the heap has doubled, so a process whose
// live heap is a few MiB (a gateway beside a small registry) collects
// dozens of times a second under load, and each collection also empties
// the sync.Pools its requests draw from. Past the floor GOGC's rule
// applies unchanged: a registry of a million instances collects as it
// would without one.
//
// The floor is kept by setting the collector's percentage, at Start and
// after each collection, to 100×floor/live when that is above GOGC's
// default. A memory limit (GOMEMLIMIT, debug.SetMemoryLimit; Caddy sets
// one from a container's limit) still bounds the heap, and the floor is
// never more than a quarter of it.
package heapfloor

import (
	"errors"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// ErrGOGCSet is Start's answer when the GOGC environment variable is
// set: the user's percentage is kept.
var ErrGOGCSet = errors.New("GOGC is set in the environment")

// defaultPercent is GOGC's default, the least the floor sets.
const defaultPercent = 100

// maxPercent bounds the percentage, so that a live heap near nothing
// does not make it overflow.
const maxPercent = 1 << 20

// Floor is one Start's floor, until its Stop.
type Floor struct {
	bytes uint64
}

// started holds the floors started and not stopped, oldest first: the
// last one applies. hook is the collections' hook while there is one.
var started struct {
	sync.Mutex
	floors []*Floor
	hook   *hook
}

// Start keeps a floor of bytes from now until Stop. A floor started
// later applies in place of the earlier ones until it stops (a Caddy
// reload's new config starts before the old one stops); when the last
// stops, the percentage goes back to GOGC's default. With the GOGC
// environment variable set, Start keeps nothing and returns ErrGOGCSet.
func Start(bytes uint64) (*Floor, error) {
	if os.Getenv("GOGC") != "" {
		return nil, ErrGOGCSet
	}
	f := &Floor{bytes: bytes}
	started.Lock()
	defer started.Unlock()
	started.floors = append(started.floors, f)
	if started.hook == nil {
		started.hook = newHook()
	}
	started.hook.apply(bytes)
	return f, nil
}

// Stop ends the floor; stopping it again does nothing.
func (f *Floor) Stop() {
	started.Lock()
	defer started.Unlock()
	for i, g := range started.floors {
		if g == f {
			started.floors = append(started.floors[:i], started.floors[i+1:]...)
			break
		}
	}
	switch n := len(started.floors); {
	case n > 0:
		started.hook.apply(started.floors[n-1].bytes)
	case started.hook != nil:
		started.hook.stopped.Store(true)
		started.hook = nil
		debug.SetGCPercent(defaultPercent)
	}
}

// Percent is the collector's percentage that lets a live heap of live
// bytes grow by floor (at most a quarter of limit, the memory limit)
// before the next collection: never under GOGC's default.
func Percent(floor, live uint64, limit int64) int {
	if limit > 0 && limit < math.MaxInt64 {
		floor = min(floor, uint64(limit)/4)
	}
	p := 100 * float64(floor) / float64(max(live, 1))
	return int(min(max(p, defaultPercent), maxPercent))
}

// hook sets the percentage after each collection, from the runtime's
// finalizer goroutine (see arm), for the floor that applies.
type hook struct {
	floor   atomic.Uint64
	percent int // the one set last; under started's lock
	stopped atomic.Bool
}

func newHook() *hook {
	h := &hook{percent: -1}
	arm(&sentinel{h: h})
	return h
}

// apply sets the percentage floor asks for with the live heap the last
// collection left, under started's lock.
func (h *hook) apply(floor uint64) {
	h.floor.Store(floor)
	p := Percent(floor, liveHeap(), debug.SetMemoryLimit(-1))
	if p != h.percent {
		h.percent = p
		debug.SetGCPercent(p)
	}
}

// sentinel is an object nothing refers to: its finalizer runs once a
// collection has found it so, and sets itself again for the next.
type sentinel struct{ h *hook }

func arm(s *sentinel) { runtime.SetFinalizer(s, afterCollection) }

// collected, when set (by tests), is called after each collection's
// percentage is set.
var collected func()

func afterCollection(s *sentinel) {
	started.Lock()
	stopped := s.h.stopped.Load()
	if !stopped {
		s.h.apply(s.h.floor.Load())
	}
	done := collected
	started.Unlock()
	if stopped {
		return
	}
	if done != nil {
		done()
	}
	arm(s)
}

// liveHeap is the heap the last collection marked live (0 before the
// first).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
