package heapfloor

import (
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

const mib = 1 << 20

// start is Start, failing the test on an error; the floor stops with the
// test.
func start(t *testing.T, bytes uint64) *Floor {
	t.Helper()
	f, err := Start(bytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	return f
}

// hooks returns a channel that gets a value after each collection's
// percentage is set, for the rest of the test.
func hooks(t *testing.T) <-chan struct{} {
	ch := make(chan struct{}, 16)
	started.Lock()
	collected = func() { ch <- struct{}{} }
	started.Unlock()
	t.Cleanup(func() {
		started.Lock()
		collected = nil
		started.Unlock()
	})
	return ch
}

// collect runs a collection and waits for the hook after it.
func collect(t *testing.T, after <-chan struct{}) {
	t.Helper()
	for len(after) > 0 {
		<-after
	}
	runtime.GC()
	select {
	case <-after:
	case <-time.After(10 * time.Second):
		t.Fatal("no hook after a collection")
	}
}

// armed is how many sentinels wait for a collection.
func armed() int {
	started.Lock()
	defer started.Unlock()
	return started.armed
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
		{32 * mib, 0, math.MaxInt64, 800},       // before the first collection: the least heap
		{32 * mib, 1 * mib, math.MaxInt64, 800}, // the runtime's least goal scales with the percentage
		{32 * mib, 8 * mib, 64 * mib, 200},      // a quarter of the memory limit
		{32 * mib, 8 * mib, 0, 100},             // a limit of nothing
		{math.MaxInt64, 8 * mib, math.MaxInt64, maxPercent},
	} {
		if got := percent(c.floor, c.live, c.limit); got != c.want {
			t.Errorf("percent(%d, %d, %d) = %d, want %d", c.floor, c.live, c.limit, got, c.want)
		}
	}
}

// Start sets the percentage from the live heap at once, and each
// collection after it sets it again from the live heap it left; a floor
// started later applies until it stops; the last Stop puts GOGC's
// default back.
func TestFloorFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	after := hooks(t)
	runtime.GC()
	const floor = 256 * mib
	f := start(t, floor)
	small := gcPercent()
	if want := percent(floor, liveHeap(), debug.SetMemoryLimit(-1)); small != want || small < 1000 {
		t.Fatalf("after Start: GOGC %d, want %d (a test's live heap is far below the floor)", small, want)
	}
	keep := make([]byte, 128*mib)
	collect(t, after)
	if p := gcPercent(); p > 200 {
		t.Fatalf("with 128 MiB more live: GOGC %d, want at most 200", p)
	}
	runtime.KeepAlive(keep)
	keep = nil
	for range 3 { // the hook arms itself again each time
		collect(t, after)
		if p := gcPercent(); p < 1000 {
			t.Fatalf("with the 128 MiB let go: GOGC %d, want it back above 1000", p)
		}
	}

	g := start(t, 1) // a floor below any heap: GOGC's default
	if p := gcPercent(); p != defaultPercent {
		t.Fatalf("with a later floor of 1 byte: GOGC %d, want %d", p, defaultPercent)
	}
	collect(t, after)
	if p := gcPercent(); p != defaultPercent {
		t.Fatalf("with a later floor of 1 byte, after a collection: GOGC %d, want %d", p, defaultPercent)
	}
	g.Stop()
	if p := gcPercent(); p < 1000 {
		t.Fatalf("after the later floor stopped: GOGC %d, want the first floor's", p)
	}
	f.Stop()
	f.Stop()
	if p := gcPercent(); p != defaultPercent {
		t.Fatalf("after the last Stop: GOGC %d, want %d", p, defaultPercent)
	}
	runtime.GC()
	testkit.Eventually(t, 10*time.Second, "the hook ended after the last Stop", func() bool { return armed() == 0 })
	if p := gcPercent(); p != defaultPercent {
		t.Fatalf("after the last Stop and a collection: GOGC %d, want %d", p, defaultPercent)
	}
}

// A Stop and a Start before the stopped hook's cleanup ran leave one
// hook, not two.
func TestStopAndStartLeaveOneHook(t *testing.T) {
	t.Setenv("GOGC", "")
	after := hooks(t)
	f := start(t, 64*mib)
	f.Stop()
	start(t, 64*mib)
	if n := armed(); n != 2 {
		t.Fatalf("%d sentinels armed right after Stop and Start, want 2 (the stopped hook's and the new one)", n)
	}
	for range 3 {
		collect(t, after)
		testkit.Eventually(t, 10*time.Second, "one hook armed", func() bool { return armed() == 1 })
	}
}

// A memory limit bounds the floor to a quarter of it.
func TestFloorUnderAMemoryLimit(t *testing.T) {
	t.Setenv("GOGC", "")
	runtime.GC()
	limit := int64(64 * mib)
	old := debug.SetMemoryLimit(limit)
	defer debug.SetMemoryLimit(old)
	start(t, 1<<40)
	if got, want := gcPercent(), percent(16*mib, liveHeap(), math.MaxInt64); got != want || got > 400 {
		t.Fatalf("GOGC %d, want %d (a floor of 16 MiB, a quarter of the limit)", got, want)
	}
}

// A percentage the user set, by GOGC or by debug.SetGCPercent, is kept.
func TestTheUsersPercentIsKept(t *testing.T) {
	t.Setenv("GOGC", "150")
	if f, err := Start(32 * mib); !errors.Is(err, ErrPercentSet) || f != nil {
		t.Fatalf("Start with GOGC set: %v, %v; want ErrPercentSet", f, err)
	}
	t.Setenv("GOGC", "")
	old := debug.SetGCPercent(150)
	defer debug.SetGCPercent(old)
	if f, err := Start(32 * mib); !errors.Is(err, ErrPercentSet) || f != nil {
		t.Fatalf("Start after debug.SetGCPercent(150): %v, %v; want ErrPercentSet", f, err)
	}
	if p := gcPercent(); p != 150 {
		t.Fatalf("GOGC %d, want 150", p)
	}
}
