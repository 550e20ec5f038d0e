package registry

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// A reader at a version whose successors were purged, or at a version this
// Store never had, must read the whole registry.
func TestChangesSinceTellsWhenTheLogIsIncomplete(t *testing.T) {
	s, clock := newTestStore(t, Config{})
	mustRegister(t, s, inst("A", "x"), false)
	mustRegister(t, s, inst("A", "y"), false)
	if _, ok := s.changesSince(7); ok {
		t.Error("a version from the future is accepted")
	}
	clock.Advance(4 * time.Minute)
	s.PurgeDeltas()
	if _, ok := s.changesSince(0); ok {
		t.Error("purged changes reported as complete")
	}
	if changes, ok := s.changesSince(2); !ok || len(changes) != 0 {
		t.Errorf("ChangesSince(current) = %v, %v", changes, ok)
	}
	mustRegister(t, s, inst("A", "z"), false)
	if changes, ok := s.changesSince(2); !ok || len(changes) != 1 || changes[0].ID != "z" {
		t.Errorf("ChangesSince after purge and write = %v, %v", changes, ok)
	}
}

func TestWatch(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	mustRegister(t, s, inst("A", "x"), false)

	// An old version returns at once, even with a context that has ended.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if v, err := s.watch(ended, 0); err != nil || v != 1 {
		t.Fatalf("Watch(old) = %d, %v", v, err)
	}
	// At the current version it waits for the next change.
	woke := make(chan uint64, 1)
	go func() {
		v, _ := s.watch(context.Background(), 1)
		woke <- v
	}()
	mustRegister(t, s, inst("A", "y"), false)
	select {
	case v := <-woke:
		if v < 2 {
			t.Fatalf("Watch woke at version %d, before the write", v)
		}
		if changes, _ := s.changesSince(1); len(changes) != 1 || changes[0].ID != "y" {
			t.Errorf("after waking: %v", changes)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not wake after a write")
	}
	// A heartbeat is not a change: the watcher stays until its context ends.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.watch(ctx, 2)
		errc <- err
	}()
	s.Renew("A", "x", RenewRequest{})
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Watch after cancel = %v", err)
	}
}

// Waiting watchers are the callers' goroutines and nothing else: the Store
// starts none of its own for them.
func TestIdleWatchersStartNoGoroutines(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	goroutines, _ := idleWatchers(t, s, 1000)
	if goroutines != 1000 {
		t.Fatalf("1000 watchers made %d goroutines", goroutines)
	}
}

// idleWatchers starts n goroutines waiting in Watch, measures the
// goroutines and heap they added, then wakes them with one write and waits
// for all of them.
func idleWatchers(tb testing.TB, s *Store, n int) (goroutines int, heapPerWatcher float64) {
	var ready, done sync.WaitGroup
	since := s.Version()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	ready.Add(n)
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			ready.Done()
			if v, err := s.watch(context.Background(), since); err != nil || v <= since {
				tb.Errorf("Watch = %d, %v", v, err)
			}
		}()
	}
	ready.Wait()
	runtime.GC()
	runtime.ReadMemStats(&after)
	goroutines = runtime.NumGoroutine() - g0
	heapPerWatcher = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
	mustRegister(tb, s, inst("WATCHED", "w"), false)
	done.Wait()
	return goroutines, heapPerWatcher
}

// BenchmarkIdleWatchers10k: 10,000 watchers waiting in Watch. Each costs
// its caller's goroutine (a stack, not counted here, and the goroutine's
// descriptor on the heap) and nothing in the Store. Reports the heap per
// watcher, and fails above 1 KiB or if the Store added goroutines.
func BenchmarkIdleWatchers10k(b *testing.B) {
	for range b.N {
		s, _ := newTestStore(b, Config{})
		goroutines, heap := idleWatchers(b, s, 10000)
		if goroutines != 10000 {
			b.Fatalf("10,000 watchers made %d goroutines", goroutines)
		}
		if heap >= 1024 {
			b.Fatalf("%.0f bytes of heap per watcher, want under 1 KiB", heap)
		}
		b.ReportMetric(heap, "heap-B/watcher")
	}
}

// BenchmarkWatchWakeup is the time from the start of a write until a
// watcher waiting for it returns from Watch.
func BenchmarkWatchWakeup(b *testing.B) {
	s, _ := newTestStore(b, Config{})
	mustRegister(b, s, inst("A", "x"), false)
	statuses := []eureka.Status{eureka.StatusDown, eureka.StatusUp}
	var total time.Duration
	b.ResetTimer()
	for n := range b.N {
		since := s.Version()
		woke := make(chan time.Time)
		go func() {
			s.watch(context.Background(), since)
			woke <- time.Now()
		}()
		runtime.Gosched()
		start := time.Now()
		s.SetStatus("A", "x", statuses[n%2], 0, false)
		total += (<-woke).Sub(start)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "wake-ns")
}

// The one rule for a long poll's wait: seconds or a Go duration, none
// given is DefaultWait, and the server's bound (DefaultMaxWait unless set,
// none when negative) caps it; negative, infinite or malformed waits are
// refused.
func TestParseWait(t *testing.T) {
	for _, c := range []struct {
		wait  string
		bound time.Duration
		want  time.Duration
	}{
		{"", 0, DefaultWait},
		{"", time.Second, time.Second},
		{"", -1, 0},
		{"0", 0, 0},
		{"20", 0, 20 * time.Second},
		{"0.5", 0, 500 * time.Millisecond},
		{"1e1", 0, 10 * time.Second},
		{"20s", 0, 20 * time.Second},
		{"1m", 0, time.Minute},
		{"250ms", 0, 250 * time.Millisecond},
		{"90", 0, DefaultMaxWait},
		{"2m", 0, DefaultMaxWait},
		{"1e300", 0, DefaultMaxWait},
		{"30", 10 * time.Second, 10 * time.Second},
		{"30s", 10 * time.Second, 10 * time.Second},
		{"30", -1, 0},
		{"-0", 0, 0},
	} {
		got, err := ParseWait(c.wait, c.bound)
		if err != nil || got != c.want {
			t.Errorf("ParseWait(%q, %v) = %v, %v; want %v", c.wait, c.bound, got, err, c.want)
		}
	}
	for _, bad := range []string{"-1", "-1s", "soon", "NaN", "inf", "-Inf", "30 s", "1h-2h"} {
		if got, err := ParseWait(bad, 0); !errors.Is(err, ErrBadWait) {
			t.Errorf("ParseWait(%q) = %v, %v; want ErrBadWait", bad, got, err)
		}
	}
}

// Version tokens name this Store's epoch: another Store's, and malformed
// ones, do not parse.
func TestVersionToken(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	other, _ := newTestStore(t, Config{})
	if other.Epoch() == s.Epoch() {
		t.Fatal("two Stores with one epoch")
	}
	local := func(v uint64) Version { return Version{Local: v} }
	if v, ok := s.ParseToken(s.Token(local(42))); !ok || v != local(42) {
		t.Errorf("own token: %+v, %v", v, ok)
	}
	for _, bad := range []string{other.Token(local(42)), "42", "", ".", "x.1", s.Token(local(1)) + "x"} {
		if v, ok := s.ParseToken(bad); ok {
			t.Errorf("ParseToken(%q) = %+v, true", bad, v)
		}
	}
}

// The one rule for staleness: a version newer than the Store's (not one
// of its versions) or older than its change log is stale, answered at
// once with the Store's version and nothing else, however long the wait.
func TestPollStaleness(t *testing.T) {
	s, clock := newTestStore(t, Config{})
	mustRegister(t, s, inst("A", "x"), false)
	mustRegister(t, s, inst("A", "y"), false)
	start := time.Now()
	if p := s.Poll(context.Background(), Poll{Since: Version{Local: 7}, Wait: time.Minute}); !p.Stale || p.Version.Local != 2 || p.Changes != nil || p.Hash != "" {
		t.Errorf("a version from the future: %+v", p)
	}
	clock.Advance(4 * time.Minute)
	s.PurgeDeltas()
	mustRegister(t, s, inst("A", "z"), false)
	if p := s.Poll(context.Background(), Poll{Since: Version{Local: 1}, Wait: time.Minute}); !p.Stale || p.Version.Local != 3 {
		t.Errorf("a version older than the change log: %+v", p)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("stale polls waited %v", took)
	}
	// The log's first retained version is still answerable.
	if p := s.Poll(context.Background(), Poll{Since: Version{Local: 2}, Wait: time.Minute}); p.Stale || len(p.Changes) != 1 || p.Changes[0].ID != "z" || p.Version.Local != 3 {
		t.Errorf("a version at the log's start: %+v", p)
	}
}

// A poll answers at once when there are changes after its version, waits
// for one otherwise, and with none answers the Store's version when its
// wait passes, its context ends or Stop ends; a poll of some apps keeps
// waiting through other apps' changes and answers past them.
func TestPoll(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	mustRegister(t, s, inst("A", "x"), false)
	mustRegister(t, s, inst("B", "y"), false)
	bg := context.Background()

	if p := s.Poll(bg, Poll{Since: Version{Local: 0}, Wait: time.Minute}); p.Stale || len(p.Changes) != 2 || p.Version.Local != 2 || p.Hash != "UP_2_" {
		t.Errorf("changes pending: %+v", p)
	}
	if p := s.Poll(bg, Poll{Since: Version{Local: 0}, Apps: []string{"B"}, Wait: time.Minute}); len(p.Changes) != 1 || p.Changes[0].App != "B" || p.Hash != "UP_1_" {
		t.Errorf("changes of B pending: %+v", p)
	}
	// No wait: at once, empty, at the Store's version.
	if p := s.Poll(bg, Poll{Since: Version{Local: 2}}); p.Stale || len(p.Changes) != 0 || p.Version.Local != 2 || p.Hash != "UP_2_" {
		t.Errorf("nothing newer, no wait: %+v", p)
	}
	// The wait passes.
	start := time.Now()
	if p := s.Poll(bg, Poll{Since: Version{Local: 2}, Wait: 50 * time.Millisecond}); len(p.Changes) != 0 || p.Version.Local != 2 {
		t.Errorf("nothing newer: %+v", p)
	}
	if took := time.Since(start); took < 40*time.Millisecond || took > 10*time.Second {
		t.Errorf("a 50 ms wait took %v", took)
	}

	// A change ends the wait; another app's change moves the version of a
	// poll of A without ending it.
	got := make(chan Polled, 1)
	go func() { got <- s.Poll(bg, Poll{Since: Version{Local: 2}, Apps: []string{"A"}, Wait: time.Minute}) }()
	mustRegister(t, s, inst("B", "y2"), false)
	time.Sleep(20 * time.Millisecond)
	select {
	case p := <-got:
		t.Fatalf("a poll of A answered a change of B: %+v", p)
	default:
	}
	mustRegister(t, s, inst("A", "x2"), false)
	select {
	case p := <-got:
		if len(p.Changes) != 1 || p.Changes[0].ID != "x2" || p.Version.Local != 4 {
			t.Errorf("after a change of A: %+v", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a change did not end the wait")
	}
	// With A's interest, an idle poll still answers past B's changes.
	mustRegister(t, s, inst("B", "y3"), false)
	if p := s.Poll(bg, Poll{Since: Version{Local: 4}, Apps: []string{"A"}}); len(p.Changes) != 0 || p.Version.Local != 5 || p.Hash != "UP_2_" {
		t.Errorf("an idle poll of A after a change of B: %+v", p)
	}

	// The request's context, and Stop, end the wait early.
	for name, end := range map[string]func(stop context.CancelFunc) context.Context{
		"context": func(context.CancelFunc) context.Context {
			ctx, cancel := context.WithCancel(bg)
			time.AfterFunc(20*time.Millisecond, cancel)
			return ctx
		},
		"stop": func(stop context.CancelFunc) context.Context {
			time.AfterFunc(20*time.Millisecond, stop)
			return bg
		},
	} {
		stop, cancel := context.WithCancel(bg)
		start := time.Now()
		p := s.Poll(end(cancel), Poll{Since: Version{Local: 5}, Wait: time.Minute, Stop: stop})
		cancel()
		if took := time.Since(start); p.Stale || len(p.Changes) != 0 || p.Version.Local != 5 || took > 10*time.Second {
			t.Errorf("%s ended: %+v after %v", name, p, took)
		}
	}
}
