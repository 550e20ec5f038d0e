package registry

import (
	"bytes"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/document"
)

// builds counts the Store's assemblies of the full registry and of the
// delta.
func builds(s *Store) (full, delta uint64) {
	return s.payloads.builds.Load(), s.payloads.deltaBuilds.Load()
}

// wantBuilds fails the test unless the Store has assembled the full
// registry full times and the delta delta times.
func wantBuilds(t *testing.T, s *Store, full, delta uint64, when string) {
	t.Helper()
	if f, d := builds(s); f != full || d != delta {
		t.Fatalf("%s: %d full and %d delta builds, want %d and %d", when, f, d, full, delta)
	}
}

func TestPrebuildAfterTheRegistryGoesQuiet(t *testing.T) {
	s, clock := newTestStore(t, Config{})
	for n := range 300 {
		mustRegister(t, s, inst("APP"+strconv.Itoa(n%3), "i"+strconv.Itoa(n)), false)
	}
	s.prebuild()
	wantBuilds(t, s, 0, 0, "while the registry was changing")

	// Quiet for PrebuildDelay: the JSON documents and their gzip forms
	// are built, the XML ones (never read) are not.
	clock.Advance(DefaultPrebuildDelay)
	s.prebuild()
	wantBuilds(t, s, 1, 1, "after a quiet second (JSON only)")
	for name, p := range map[string]*document.Payload{"full": s.payloads.full[eureka.FormatJSON].Load(), "delta": s.payloads.delta[eureka.FormatJSON].Load()} {
		if p == nil || !p.GzipMade() {
			t.Fatalf("the %s JSON document or its gzip form is not built", name)
		}
	}
	if s.payloads.full[eureka.FormatXML].Load() != nil {
		t.Error("the XML full registry was built though nobody read it")
	}
	// Readers take what was built.
	full, delta := s.Documents().Full(eureka.FormatJSON), s.Documents().Delta(eureka.FormatJSON)
	if full != s.payloads.full[eureka.FormatJSON].Load() || delta != s.payloads.delta[eureka.FormatJSON].Load() {
		t.Error("a reader did not get the prebuilt document")
	}
	wantBuilds(t, s, 1, 1, "after the readers")

	// An idle registry costs nothing.
	clock.Advance(DefaultPrebuildDelay)
	s.prebuild()
	wantBuilds(t, s, 1, 1, "an idle registry")

	// Once XML is read, a change brings both formats.
	s.Documents().Full(eureka.FormatXML)
	s.Documents().Delta(eureka.FormatXML)
	mustRegister(t, s, inst("APP0", "late"), false)
	clock.Advance(DefaultPrebuildDelay)
	f0, d0 := builds(s)
	s.prebuild()
	if f, d := builds(s); f-f0 != 2 || d-d0 != 2 {
		t.Errorf("after a change: %d full and %d delta builds, want 2 and 2 (JSON and XML)", f-f0, d-d0)
	}
	p := s.Documents().Full(eureka.FormatXML)
	if doc, err := eureka.DecodeApplications(eureka.FormatXML, p.Bytes()); err != nil || len(idsOfDoc(doc)) != 301 {
		t.Errorf("the prebuilt XML registry: %v, want 301 instances", err)
	}

	// XML unread for xmlInterest (one health check's read, say): a
	// change brings the JSON documents only.
	clock.Advance(xmlInterest)
	mustRegister(t, s, inst("APP0", "later"), false)
	clock.Advance(DefaultPrebuildDelay)
	f0, d0 = builds(s)
	s.prebuild()
	if f, d := builds(s); f-f0 != 1 || d-d0 != 1 {
		t.Errorf("XML unread for %v, then a change: %d full and %d delta builds, want 1 and 1 (JSON)", xmlInterest, f-f0, d-d0)
	}
}

// A document that ages (PayloadMaxAge: heartbeats move its lease
// timestamps) is built again ahead of its reader only if it has one.
func TestPrebuildOfAnAgingDocument(t *testing.T) {
	s, clock := newTestStore(t, Config{})
	mustRegister(t, s, inst("APP", "i1"), false)
	clock.Advance(DefaultPrebuildDelay)
	s.prebuild()
	f0, _ := builds(s)
	clock.Advance(DefaultPayloadMaxAge - DefaultPrebuildDelay/2)
	s.prebuild()
	if f, _ := builds(s); f != f0 {
		t.Fatalf("a document nobody read since its build was built again as it aged")
	}
	s.Documents().Full(eureka.FormatJSON) // still current: served, not built
	s.prebuild()
	if f, _ := builds(s); f != f0+1 {
		t.Fatalf("a document read as it aged was built %d times ahead of its next reader, want once", f-f0)
	}
	p := s.Documents().Full(eureka.FormatJSON)
	if f, _ := builds(s); f != f0+1 || p.Built() != clock.Now().UnixMilli() {
		t.Errorf("the reader after the prebuild did not get it")
	}
}

func TestPrebuildSettings(t *testing.T) {
	for name, cfg := range map[string]Config{"negative delay": {PrebuildDelay: -1}, "delta disabled": {DisableDelta: true}} {
		s, clock := newTestStore(t, cfg)
		mustRegister(t, s, inst("APP", "i1"), false)
		clock.Advance(time.Minute)
		s.prebuild()
		f, d := builds(s)
		if cfg.PrebuildDelay < 0 && (f != 0 || d != 0) {
			t.Errorf("%s: %d full and %d delta builds, want none", name, f, d)
		}
		if cfg.DisableDelta && (f != 1 || d != 0) {
			t.Errorf("%s: %d full and %d delta builds, want the full registry only", name, f, d)
		}
	}
}

// Readers that come while prebuild builds wait for its build: one build
// in all.
func TestReadersDuringPrebuildShareItsBuild(t *testing.T) {
	s, clock := newTestStore(t, Config{})
	for n := range 20000 {
		mustRegister(t, s, inst("APP"+strconv.Itoa(n%50), "i"+strconv.Itoa(n)), false)
	}
	clock.Advance(DefaultPrebuildDelay)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.prebuild()
	}()
	for n := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if n%2 == 0 {
				s.Documents().Full(eureka.FormatJSON).Gzip()
			} else {
				s.Documents().Delta(eureka.FormatJSON).Gzip()
			}
		}()
	}
	wg.Wait()
	if f, d := builds(s); f != 1 || d != 1 {
		t.Errorf("prebuild and 20 readers made %d full and %d delta builds, want 1 and 1", f, d)
	}
}

// askingClock is a fake clock that, once armed, reports the next reading
// of it, so that a test knows when a reader has taken the version it
// asks for.
type askingClock struct {
	*testkit.FakeClock
	armed atomic.Bool
	read  chan struct{}
}

func (c *askingClock) Now() time.Time {
	if c.armed.CompareAndSwap(true, false) {
		c.read <- struct{}{}
	}
	return c.FakeClock.Now()
}

// A reader that finds a build under way takes its result when it holds
// every change made before the reader came, even if more came since:
// with changes arriving faster than builds, a reader never waits for
// more than two.
func TestReaderTakesTheBuildItWaitedFor(t *testing.T) {
	for _, doc := range []string{"full", "delta"} {
		clock := &askingClock{FakeClock: newFakeClock(), read: make(chan struct{})}
		s := New(Config{Clock: clock})
		mustRegister(t, s, inst("APP", "i1"), false)
		c := &s.payloads
		f := eureka.FormatJSON
		// The document's build lock, a build under it, a read, what is
		// kept and how many builds there were.
		lock, build, get := &c.fullBuild[f], func() { s.buildFull(f, 0) }, func() *document.Payload { return s.Documents().Full(f) }
		kept, count := c.full[f].Load, c.builds.Load
		if doc == "delta" {
			lock, build, get = &c.deltaBuild[f], func() { s.buildDelta(f) }, func() *document.Payload { return s.Documents().Delta(f) }
			kept, count = c.delta[f].Load, c.deltaBuilds.Load
		}

		// A build is under way, at the version the reader will ask for.
		lock.Lock()
		clock.armed.Store(true)
		got := make(chan *document.Payload)
		go func() { got <- get() }()
		<-clock.read // the reader has taken its version, and waits for the lock
		build()
		built, before := kept(), count()
		mustRegister(t, s, inst("APP", "i2"), false) // a change after the reader came
		lock.Unlock()
		if p := <-got; p != built || count() != before {
			t.Errorf("%s: the reader built again (%d builds) instead of taking the build it waited for", doc, count()-before)
		}
		// A reader after the change gets it.
		if p := get(); p.Version() != s.version.Load() {
			t.Errorf("%s: a reader after a change got version %d, want %d", doc, p.Version(), s.version.Load())
		}
	}
}

// While registrations keep coming, the changes waiting for the delta are
// folded into its document once they are many, without building it, and
// the full registry is built as often; the delta built once the registry
// goes quiet folds only the rest, and is the delta written whole.
func TestPrebuildFoldsAMassRegistrationAhead(t *testing.T) {
	defer func(n uint64) { foldAheadFrom = n }(foldAheadFrom)
	foldAheadFrom = 50
	s, clock := newTestStore(t, Config{})
	json, xml := s.payloads.deltaDocs[eureka.FormatJSON], s.payloads.deltaDocs[eureka.FormatXML]
	for n := range 120 {
		mustRegister(t, s, inst("APP"+strconv.Itoa(n%3), "i"+strconv.Itoa(n)), false)
	}
	s.prebuild()
	wantBuilds(t, s, 1, 0, "while the registry was changing (the full registry built ahead, the delta folded)")
	if folds := s.payloads.deltaFolds.Load(); folds != 1 || json.UpTo() != s.version.Load() {
		t.Fatalf("%d folds ahead, the JSON delta holds changes up to %d of %d", folds, json.UpTo(), s.version.Load())
	}
	if xml.UpTo() != 0 {
		t.Error("the XML delta, never read, was folded ahead")
	}
	// Fewer waiting changes than foldAheadFrom: left to the build.
	for n := range 10 {
		mustRegister(t, s, inst("APP0", "late"+strconv.Itoa(n)), false)
	}
	s.prebuild()
	if folds := s.payloads.deltaFolds.Load(); folds != 1 {
		t.Fatalf("%d folds ahead after 10 more changes, want still 1", folds)
	}
	clock.Advance(DefaultPrebuildDelay)
	s.prebuild()
	wantBuilds(t, s, 2, 1, "once quiet")
	got := s.Documents().Delta(eureka.FormatJSON).Bytes()
	if want := wholeDelta(s, eureka.FormatJSON, counterOf(t, eureka.FormatJSON, got)); !bytes.Equal(got, want) {
		t.Errorf("the delta folded ahead differs from the delta written whole:\n%s\n%s", got, want)
	}
}
