package heapfloor

import (
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

const mib = 1 << 20

// gogc is the collector's percentage now.
func gogc(t *testing.T) int {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// start is Start, failing the test on an error.
func start(t *testing.T, bytes uint64) *Floor {
	t.Helper()
	f, err := Start(bytes)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		floor, live uint64
		limit       int64
		want        int
	}{
		{32 * mib, 8 * mib, math.MaxInt64, 400},
		{32 * mib, 64 * mib, math.MaxInt64, 100}, // past the floor: GOGC's default
		{32 * mib, 32 * mib, math.MaxInt64, 100},
		{32 * mib, 0, math.MaxInt64, maxPercent}, // before the first collection
		{32 * mib, 8 * mib, 64 * mib, 200},       // a quarter of the memory limit
		{32 * mib, 8 * mib, 0, 400},              // no limit
	} {
		if got := Percent(c.floor, c.live, c.limit); got != c.want {
			t.Errorf("Percent(%d, %d, %d) = %d, want %d", c.floor, c.live, c.limit, got, c.want)
		}
	}
}

// Start sets the percentage from the live heap at once; after each
// collection it follows the live heap; the last Stop puts GOGC's default
// back, and a floor started later applies until it stops.
func TestFloorFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	runtime.GC()
	floor := uint64(256 * mib) // far above a test's live heap before keep
	f := start(t, floor)
	before := gogc(t)
	if want := Percent(floor, liveHeap(), debug.SetMemoryLimit(-1)); before != want || before <= 1000 {
		t.Fatalf("after Start: GOGC %d, want %d (above 1000)", before, want)
	}

	after := make(chan struct{}, 1)
	started.Lock()
	collected = func() {
		select {
		case after <- struct{}{}:
		default:
		}
	}
	started.Unlock()
	t.Cleanup(func() {
		started.Lock()
		collected = nil
		started.Unlock()
	})
	keep := make([]byte, 64*mib) // the live heap grows: the percentage falls
	runtime.GC()
	select {
	case <-after:
	case <-time.After(10 * time.Second):
		t.Fatal("no call after a collection")
	}
	if got, want := gogc(t), Percent(floor, liveHeap(), debug.SetMemoryLimit(-1)); got != want || got >= before {
		t.Fatalf("after a collection with 64 MiB more live: GOGC %d, want %d (below %d)", got, want, before)
	}
	runtime.KeepAlive(keep)

	g := start(t, 1) // a floor below any heap: GOGC's default
	if got := gogc(t); got != defaultPercent {
		t.Fatalf("with a later floor of 1 byte: GOGC %d, want %d", got, defaultPercent)
	}
	g.Stop()
	if got := gogc(t); got <= defaultPercent {
		t.Fatalf("after the later floor stopped: GOGC %d, want the first floor's (above %d)", got, defaultPercent)
	}
	f.Stop()
	f.Stop()
	if got := gogc(t); got != defaultPercent {
		t.Fatalf("after the last Stop: GOGC %d, want %d", got, defaultPercent)
	}
	started.Lock()
	hooked := started.hook != nil
	started.Unlock()
	if hooked {
		t.Fatal("a hook left after the last Stop")
	}
}

// A memory limit bounds the floor to a quarter of it.
func TestFloorUnderAMemoryLimit(t *testing.T) {
	t.Setenv("GOGC", "")
	runtime.GC()
	live := liveHeap()
	limit := int64(live) * 8 // a quarter of it is twice the live heap
	old := debug.SetMemoryLimit(limit)
	defer debug.SetMemoryLimit(old)
	f := start(t, 1<<40)
	defer f.Stop()
	if got, want := gogc(t), Percent(1<<40, liveHeap(), limit); got != want || got > 250 {
		t.Fatalf("GOGC %d, want %d (about 200: a quarter of the limit over the live heap)", got, want)
	}
}

// The user's GOGC is kept.
func TestGOGCInTheEnvironmentIsKept(t *testing.T) {
	t.Setenv("GOGC", "150")
	if f, err := Start(32 * mib); !errors.Is(err, ErrGOGCSet) || f != nil {
		t.Fatalf("Start with GOGC set: %v, %v; want ErrGOGCSet", f, err)
	}
	if got := gogc(t); got != defaultPercent {
		t.Fatalf("GOGC %d, want %d", got, defaultPercent)
	}
}
