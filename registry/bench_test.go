package registry

import (
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/document"
)

// populate registers n instances spread over n/20 apps, shaped like a
// Spring Boot registration.
func populate(tb testing.TB, s *Store, n int) {
	for i := range n {
		mustRegister(tb, s, testkit.SampleInstance(i), false)
	}
}

func BenchmarkRenew(b *testing.B) { benchRenew(b, 0) }

// BenchmarkRenewListeners is BenchmarkRenew with OnHeartbeat listeners,
// each counting: what renewals cost once someone listens.
func BenchmarkRenewListeners(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchRenew(b, n) })
	}
}

// benchRenew renews 1000 leases in turn from every P, with listeners
// OnHeartbeat listeners.
func benchRenew(b *testing.B, listeners int) {
	s, _ := newTestStore(b, Config{})
	populate(b, s, 1000)
	var heard atomic.Int64
	for range listeners {
		defer s.OnHeartbeat(func(Heartbeat) { heard.Add(1) })()
	}
	keys := make([][2]string, 1000)
	for n := range keys {
		i := testkit.SampleInstance(n)
		keys[n] = [2]string{i.App, i.InstanceID}
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := keys[next.Add(1)%1000]
			if res, _ := s.Renew(k[0], k[1], RenewRequest{}); res != RenewOK {
				b.Fatal(res)
			}
		}
	})
}

func BenchmarkRegister(b *testing.B) {
	s, _ := newTestStore(b, Config{})
	populate(b, s, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for n := range b.N {
		mustRegister(b, s, testkit.SampleInstance(n%10000), false)
	}
}

func BenchmarkFullFetch10k(b *testing.B) {
	for _, f := range []eureka.Format{eureka.FormatJSON, eureka.FormatXML} {
		name := map[eureka.Format]string{eureka.FormatJSON: "json", eureka.FormatXML: "xml"}[f]
		b.Run(name+"/cached", func(b *testing.B) {
			s, _ := newTestStore(b, Config{})
			populate(b, s, 10000)
			size := s.Documents().Full(f).Len()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				s.Documents().Full(f)
			}
			b.ReportMetric(float64(size), "payload-bytes")
			if s.Documents().Builds() != 1 {
				b.Fatalf("unchanged registry serialized %d times", s.Documents().Builds())
			}
		})
		b.Run(name+"/rebuild", func(b *testing.B) {
			s, _ := newTestStore(b, Config{})
			populate(b, s, 10000)
			b.ReportAllocs()
			b.ResetTimer()
			for n := range b.N {
				s.SetStatus(testkit.SampleInstance(0).App, testkit.SampleInstance(0).InstanceID, []eureka.Status{eureka.StatusUp, eureka.StatusDown}[n%2], 0, false)
				s.Documents().Full(f)
			}
		})
	}
}

func BenchmarkEmptyDelta(b *testing.B) {
	s, clock := newTestStore(b, Config{})
	populate(b, s, 10000)
	clock.Advance(200e9)
	s.PurgeDeltas()
	s.Documents().Delta(eureka.FormatJSON)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Documents().Delta(eureka.FormatJSON)
	}
}

// BenchmarkHeapPerInstance reports the heap the Store holds per registered
// instance at 100,000 instances.
func BenchmarkHeapPerInstance(b *testing.B) {
	for range b.N {
		b.ReportMetric(heapPerInstance(b, 100000), "heap-B/instance")
	}
}

func heapPerInstance(tb testing.TB, n int) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, _ := newTestStore(tb, Config{})
	populate(tb, s, n)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// The memory target is a size, not a speed, so it is checked in the normal
// suite: at most 4 KiB of heap per registered instance at 100,000.
func TestHeapPerInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("registers 100,000 instances")
	}
	if got := heapPerInstance(t, 100000); got > 4096 {
		t.Fatalf("%.0f bytes of heap per instance, want at most 4096", got)
	} else {
		t.Logf("%.0f bytes of heap per instance", got)
	}
}

// BenchmarkRegisterInto registers 10,000 new instances into one app and
// spread over 100 apps: the cost of a change follows the change, not the
// size of its app.
func BenchmarkRegisterInto(b *testing.B) {
	for _, apps := range []int{1, 100} {
		b.Run(map[int]string{1: "one-app", 100: "100-apps"}[apps], func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				s, _ := newTestStore(b, Config{})
				for n := range 10000 {
					i := testkit.SampleInstance(n)
					i.App = "APP-" + strconv.Itoa(n%apps)
					mustRegister(b, s, i, false)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10000), "ns/registration")
		})
	}
}

// BenchmarkEvictionRun removes 1,500 expired leases of a 15,000-instance
// app in one run.
func BenchmarkEvictionRun(b *testing.B) {
	for range b.N {
		b.StopTimer()
		s, clock := newTestStore(b, Config{DisableSelfPreservation: true})
		for n := range 15000 {
			i := testkit.SampleInstance(n)
			i.App = "BIG"
			mustRegister(b, s, i, false)
		}
		clock.Advance(91 * time.Second)
		for n := 1500; n < 15000; n++ {
			s.Renew("BIG", testkit.SampleInstance(n).InstanceID, RenewRequest{})
		}
		b.StartTimer()
		if ev := s.Evict(); len(ev) != 1500 {
			b.Fatalf("evicted %d", len(ev))
		}
	}
}

// The first build of the full registry and of the delta after a mass
// registration of 100,000 instances (every piece encoded), gzipped as
// clients read them, and one more version of the delta after a change
// (only the change's chunk): eurekabench million runs the same at a
// million, in a process of its own. The "-compressed" runs keep the
// documents compressed only, as a million instances do (MaxPlainPayload).
func BenchmarkFirstReads100k(b *testing.B) {
	for _, run := range []struct {
		f        eureka.Format
		name     string
		maxPlain int64
	}{
		{eureka.FormatJSON, "json", 0}, {eureka.FormatXML, "xml", 0},
		{eureka.FormatJSON, "json-compressed", 32 << 20}, {eureka.FormatXML, "xml-compressed", 32 << 20},
	} {
		f, name := run.f, run.name
		s, clock := newTestStore(b, Config{MaxPlainPayload: run.maxPlain})
		populate(b, s, 100_000)
		b.Run(name+"/full", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				clock.Advance(2 * s.cfg.PayloadMaxAge) // every piece stale
				s.Documents().Full(f).Gzip()
			}
		})
		b.Run(name+"/delta-first", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				s.payloads.deltaDocs[f] = document.NewDelta(f, 0) // as after a start: nothing encoded
				clock.Advance(2 * s.cfg.PayloadMaxAge)
				b.StartTimer()
				s.Documents().Delta(f).Gzip()
			}
		})
		b.Run(name+"/delta-next", func(b *testing.B) {
			i := testkit.SampleInstance(7)
			b.ReportAllocs()
			for n := range b.N {
				s.SetStatus(i.App, i.InstanceID, []eureka.Status{eureka.StatusUp, eureka.StatusDown}[n%2], 0, false)
				s.Documents().Delta(f).Gzip()
			}
		})
	}
}

// The first full read after a mass registration of 200,000 instances
// over 1,000 applications, interleaved, with prebuild run as its loop
// would (every 6,400 registrations: half a second at 12,800 a second):
// what the fleet's first reader waits for (eurekabench cluster runs the
// same at a million, on three nodes).
func BenchmarkFirstFullReadAfterMassRegistration(b *testing.B) {
	for range b.N {
		b.StopTimer()
		s, _ := newTestStore(b, Config{MaxPlainPayload: 32 << 20})
		s.Documents().Full(eureka.FormatJSON) // a fleet reads it
		for n := range 200_000 {
			i := testkit.SampleInstance(n)
			i.App = "APP-" + strconv.Itoa(n%1000)
			if err := s.Register(i, false); err != nil {
				b.Fatal(err)
			}
			if n%6400 == 6399 {
				s.prebuild()
			}
		}
		b.StartTimer()
		gz := s.Documents().Full(eureka.FormatJSON).Gzip()
		b.ReportMetric(float64(gz.Len()), "gzip-bytes")
	}
}
