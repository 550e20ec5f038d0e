package registry

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// Every kind of write records exactly one change, in order, with versions
// that increase by one; writes that alter nothing record none.
func TestChangeStreamOneChangePerWriteKind(t *testing.T) {
	s, clock := newTestStore(t, Config{DisableSelfPreservation: true})
	var got []Change
	unsubscribe := s.Subscribe(func(c Change) { got = append(got, c) })
	defer unsubscribe()

	steps := []struct {
		name string
		do   func()
		want []ChangeKind
	}{
		{"register", func() { mustRegister(t, s, inst("A", "x"), false) }, []ChangeKind{Registered}},
		{"heartbeat", func() { s.Renew("A", "x", RenewRequest{}) }, nil},
		{"re-register", func() { mustRegister(t, s, inst("A", "x"), false) }, []ChangeKind{Registered}},
		{"status override", func() { s.SetStatus("A", "x", eureka.StatusOutOfService, 0, false) }, []ChangeKind{StatusSet}},
		{"same status again", func() { s.SetStatus("A", "x", eureka.StatusOutOfService, 0, false) }, nil},
		{"delete override", func() { s.DeleteStatusOverride("A", "x", eureka.StatusUp, 0, false) }, []ChangeKind{OverrideDeleted}},
		{"delete absent override", func() { s.DeleteStatusOverride("A", "x", eureka.StatusUp, 0, false) }, nil},
		{"metadata", func() { s.UpdateMetadata("A", "x", map[string]string{"k": "v"}) }, []ChangeKind{MetadataUpdated}},
		{"heartbeat applying an override", func() {
			s.mu.Lock()
			s.setOverride("x", eureka.StatusDown, s.nowMillis())
			s.mu.Unlock()
			s.Renew("A", "x", RenewRequest{})
		}, []ChangeKind{Renewed}},
		{"replicated heartbeat carrying a newer override", func() {
			s.Renew("A", "x", RenewRequest{LastDirtyTimestamp: 9999, OverriddenStatus: eureka.StatusOutOfService, Replication: true})
		}, []ChangeKind{OverrideAdopted}},
		{"cancel", func() { s.Cancel("A", "x", false) }, []ChangeKind{Cancelled}},
		{"cancel unknown", func() { s.Cancel("A", "x", false) }, nil},
		{"replicated register", func() { mustRegister(t, s, inst("B", "y"), true) }, []ChangeKind{Registered}},
		{"eviction", func() { clock.Advance(91 * time.Second); s.Evict() }, []ChangeKind{Evicted}},
	}
	for _, st := range steps {
		before := len(got)
		st.do()
		var kinds []ChangeKind
		for _, c := range got[before:] {
			kinds = append(kinds, c.Kind)
		}
		want(t, st.name, kinds, st.want)
	}
	for n, c := range got {
		if c.Version != uint64(n+1) {
			t.Errorf("change %d (%v) has version %d", n, c.Kind, c.Version)
		}
	}
	if s.Version() != uint64(len(got)) {
		t.Errorf("Version() = %d after %d changes", s.Version(), len(got))
	}
	want(t, "new flags", []bool{got[0].New, got[1].New}, []bool{true, false})
	want(t, "replicated register", got[len(got)-2].Replicated, true)
	want(t, "cancel's instance", got[len(got)-3].Instance.ActionType, eureka.ActionDeleted)

	// The log holds the same changes.
	logged, ok := s.ChangesSince(0)
	if !ok || len(logged) != len(got) {
		t.Fatalf("ChangesSince(0) = %d changes, %v; want %d", len(logged), ok, len(got))
	}
	for n := range logged {
		if logged[n].Version != got[n].Version || logged[n].Kind != got[n].Kind {
			t.Errorf("log entry %d = %v@%d, stream said %v@%d", n, logged[n].Kind, logged[n].Version, got[n].Kind, got[n].Version)
		}
	}
	if tail, ok := s.ChangesSince(uint64(len(got) - 2)); !ok || len(tail) != 2 {
		t.Errorf("ChangesSince(last-2) = %d changes, %v", len(tail), ok)
	}
}

// A reader at a version whose successors were purged, or at a version this
// Store never had, must read the whole registry.
func TestChangesSinceTellsWhenTheLogIsIncomplete(t *testing.T) {
	s, clock := newTestStore(t, Config{})
	mustRegister(t, s, inst("A", "x"), false)
	mustRegister(t, s, inst("A", "y"), false)
	if _, ok := s.ChangesSince(7); ok {
		t.Error("a version from the future is accepted")
	}
	clock.Advance(4 * time.Minute)
	s.PurgeDeltas()
	if _, ok := s.ChangesSince(0); ok {
		t.Error("purged changes reported as complete")
	}
	if changes, ok := s.ChangesSince(2); !ok || len(changes) != 0 {
		t.Errorf("ChangesSince(current) = %v, %v", changes, ok)
	}
	mustRegister(t, s, inst("A", "z"), false)
	if changes, ok := s.ChangesSince(2); !ok || len(changes) != 1 || changes[0].ID != "z" {
		t.Errorf("ChangesSince after purge and write = %v, %v", changes, ok)
	}
}

func TestWatch(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	mustRegister(t, s, inst("A", "x"), false)

	// An old version returns at once, even with a context that has ended.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if v, err := s.Watch(ended, 0); err != nil || v != 1 {
		t.Fatalf("Watch(old) = %d, %v", v, err)
	}
	// At the current version it waits for the next change.
	woke := make(chan uint64, 1)
	go func() {
		v, _ := s.Watch(context.Background(), 1)
		woke <- v
	}()
	mustRegister(t, s, inst("A", "y"), false)
	select {
	case v := <-woke:
		if v < 2 {
			t.Fatalf("Watch woke at version %d, before the write", v)
		}
		if changes, _ := s.ChangesSince(1); len(changes) != 1 || changes[0].ID != "y" {
			t.Errorf("after waking: %v", changes)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not wake after a write")
	}
	// A heartbeat is not a change: the watcher stays until its context ends.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.Watch(ctx, 2)
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
			if v, err := s.Watch(context.Background(), since); err != nil || v <= since {
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
			s.Watch(context.Background(), since)
			woke <- time.Now()
		}()
		runtime.Gosched()
		start := time.Now()
		s.SetStatus("A", "x", statuses[n%2], 0, false)
		total += (<-woke).Sub(start)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "wake-ns")
}

// Readers of the views during a stream of changes see whole views, each
// sorted, and the last change once the writes return.
func TestViewsUnderConcurrentChanges(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				list := s.Instances("A")
				for k := 1; k < len(list); k++ {
					if list[k-1].ID() >= list[k].ID() {
						t.Errorf("view not sorted: %s before %s", list[k-1].ID(), list[k].ID())
						return
					}
				}
			}
		}()
	}
	for n := range 2000 {
		id := fmt.Sprintf("i%04d", n%300)
		if n%3 == 2 {
			s.Cancel("A", id, false)
		} else {
			mustRegister(t, s, inst("A", id), false)
		}
	}
	close(stop)
	wg.Wait()
	want(t, "view after the writes", len(s.AllInstances("A")), len(s.Applications().Applications[0].Instances))
}
