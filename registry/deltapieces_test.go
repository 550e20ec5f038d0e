package registry

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry/document"
	"github.com/eurekagate/eurekagate/registry/internal/deltacut"
)

// wholeDelta is the delta written whole, from the retained log.
func wholeDelta(s *Store, f eureka.Format, counter int64) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return eureka.AppendApplications(nil, f, s.deltaLocked(counter))
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// counterOf reads versions__delta back from a delta document.
func counterOf(t *testing.T, f eureka.Format, b []byte) int64 {
	t.Helper()
	doc, err := eureka.DecodeApplications(f, b)
	if err != nil {
		t.Fatal(err)
	}
	return doc.VersionsDelta
}

// The delta assembled from pieces is, byte for byte, the delta written
// whole, in both formats, plain and gzipped, with the same hash, over
// random changes of a few instances (registrations and re-registrations,
// status overrides set and deleted, heartbeats that fix a status,
// metadata, cancels and evictions of the same instances) and purges of
// the log; kept plain, compressed only (MaxPlainPayload), and switching
// between the two as the delta grows and shrinks; folded a batch at a
// time, as after a mass registration; and with each application's
// deflated pieces made one run, as large applications have them. The
// full registry too.
func TestDeltaFromPiecesIsTheWholeDelta(t *testing.T) {
	defer func(n, m, c int) { deltacut.FoldBatch, deltacut.FlattenFrom, deltacut.ChunkSize = n, m, c }(deltacut.FoldBatch, deltacut.FlattenFrom, deltacut.ChunkSize)
	for seed := range uint64(12) {
		deltacut.ChunkSize = 64
		if seed%4 >= 2 {
			deltacut.ChunkSize = 3 // applications of many chunks, split as they grow
		}
		if seed >= 9 {
			deltacut.FoldBatch = 1 // every fold of more than one change in batches
		}
		deltacut.FlattenFrom = 32 << 10 // as a registry has it
		if seed%2 == 1 {
			deltacut.FlattenFrom = 1 // every entry's deflated pieces made one run
		}
		rnd := rand.New(rand.NewPCG(seed, 99))
		limit := [...]int64{-1, 1, 40_000}[seed%3]
		s, clock := newTestStore(t, Config{DisableSelfPreservation: true, MaxPlainPayload: limit})
		apps := []string{"A", "B", "C"}
		for step := range 400 {
			app := apps[rnd.IntN(len(apps))]
			id := app + strconv.Itoa(rnd.IntN(90)) // enough to split chunks
			switch k := rnd.IntN(10); {
			case k < 4:
				i := inst(app, id)
				i.Metadata = map[string]string{"step": strconv.Itoa(step)}
				s.Register(i, false)
			case k == 4:
				s.SetStatus(app, id, eureka.StatusOutOfService, 0, false)
			case k == 5:
				s.DeleteStatusOverride(app, id, eureka.StatusUp, 0, false)
			case k == 6:
				s.UpdateMetadata(app, id, map[string]string{"m": strconv.Itoa(step)})
			case k == 7:
				s.Cancel(app, id, false)
			case k == 8:
				s.Renew(app, id, RenewRequest{})
			default:
				clock.Advance(time.Duration(rnd.IntN(40)) * time.Second)
				if rnd.IntN(3) == 0 {
					s.PurgeDeltas()
				}
				if rnd.IntN(5) == 0 {
					s.Evict()
				}
			}
			if rnd.IntN(4) != 0 {
				continue // let changes pile up between reads, too
			}
			for _, f := range []eureka.Format{eureka.FormatJSON, eureka.FormatXML} {
				p := s.Documents().Delta(f)
				got := p.Bytes()
				want := wholeDelta(s, f, counterOf(t, f, got))
				if !bytes.Equal(got, want) {
					t.Fatalf("seed %d step %d format %v: pieces\n%s\nwhole\n%s", seed, step, f, got, want)
				}
				if z := gunzip(t, p.Gzip().Bytes()); !bytes.Equal(z, want) {
					t.Fatalf("seed %d step %d format %v: the gzip form differs from the document", seed, step, f)
				}
				if limit == 1 && !p.Compressed() || limit == -1 && p.Compressed() {
					t.Fatalf("seed %d: limit %d, compressed %v", seed, limit, p.Compressed())
				}
				var streamed bytes.Buffer
				if _, err := io.Copy(&streamed, p.Reader()); err != nil || !bytes.Equal(streamed.Bytes(), want) || p.Len() != len(want) {
					t.Fatalf("seed %d step %d format %v: read as a stream: %v, %d of %d bytes", seed, step, f, err, streamed.Len(), len(want))
				}
				// The full registry's lease timestamps lag heartbeats
				// (PayloadMaxAge): its forms agree, and it holds every lease.
				full := s.Documents().Full(f)
				plainFull := full.Bytes()
				var fullStream bytes.Buffer
				io.Copy(&fullStream, full.Reader())
				if !bytes.Equal(gunzip(t, full.Gzip().Bytes()), plainFull) || !bytes.Equal(fullStream.Bytes(), plainFull) || full.Len() != len(plainFull) {
					t.Fatalf("seed %d step %d format %v: the full registry's forms differ", seed, step, f)
				}
				doc, err := eureka.DecodeApplications(f, plainFull)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(idsOfDoc(doc)); n != s.Len() {
					t.Fatalf("seed %d step %d format %v: full registry of %d instances, the Store holds %d", seed, step, f, n, s.Len())
				}
			}
		}
	}
}

// Concurrent readers of a document that is not built yet wait for one
// build and share it: 20 first fetches of the full registry and 20 of
// the delta, in each format, make one build of each.
func TestConcurrentReadersShareOneBuild(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	for n := range 2000 {
		mustRegister(t, s, inst("APP"+strconv.Itoa(n%20), "i"+strconv.Itoa(n)), false)
	}
	for _, f := range []eureka.Format{eureka.FormatJSON, eureka.FormatXML} {
		fulls, deltas := s.payloads.builds.Load(), s.payloads.deltaBuilds.Load()
		var wg sync.WaitGroup
		start := make(chan struct{})
		got := make([]*document.Payload, 40)
		for n := range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if n%2 == 0 {
					got[n] = s.Documents().Full(f)
				} else {
					got[n] = s.Documents().Delta(f)
				}
			}()
		}
		close(start)
		wg.Wait()
		if b := s.payloads.builds.Load() - fulls; b != 1 {
			t.Errorf("format %v: %d builds of the full registry for 20 readers, want 1", f, b)
		}
		if b := s.payloads.deltaBuilds.Load() - deltas; b != 1 {
			t.Errorf("format %v: %d builds of the delta for 20 readers, want 1", f, b)
		}
		for n := 2; n < 40; n++ {
			if got[n] != got[n%2] {
				t.Fatalf("format %v: reader %d got another document", f, n)
			}
		}
	}
}

func idsOfDoc(doc *eureka.Applications) []string {
	var out []string
	for _, a := range doc.Applications {
		for _, i := range a.Instances {
			out = append(out, a.Name+"/"+i.ID())
		}
	}
	return out
}

// Readers of every form of the documents while writes go on and the
// documents cross MaxPlainPayload both ways: each document read is whole
// and agrees with its gzip form (run with -race).
func TestDocumentsReadWhileTheyChangeForm(t *testing.T) {
	s, _ := newTestStore(t, Config{MaxPlainPayload: 30_000})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := eureka.Format(r % 2)
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, p := range []*document.Payload{s.Documents().Full(f), s.Documents().Delta(f)} {
					var b bytes.Buffer
					io.Copy(&b, p.Reader())
					zr, err := gzip.NewReader(p.Gzip().Reader())
					if err != nil {
						t.Error(err)
						return
					}
					z, err := io.ReadAll(zr)
					if err != nil || !bytes.Equal(z, b.Bytes()) || b.Len() != p.Len() {
						t.Errorf("a document's forms differ: %v", err)
						return
					}
				}
			}
		}()
	}
	for n := range 300 {
		id := "i" + strconv.Itoa(n%40)
		if n%80 < 40 {
			s.Register(inst("A", id), false)
		} else {
			s.Cancel("A", id, false)
		}
	}
	close(stop)
	wg.Wait()
}
