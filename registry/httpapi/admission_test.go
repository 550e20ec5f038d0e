package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/document"
)

// bigPart is the length from which a document's parts are written as
// they are (registry/document's bigPart), one write each.
const bigPart = 32 << 10

// bulkLog is a writer that lets each document's first write through and
// counts the later ones in flight, across all bulkLogs sharing its counts.
type bulkLog struct {
	first           bool
	inFlight, most  *atomic.Int32
	written, writes *atomic.Int64
}

func (w *bulkLog) Write(b []byte) (int, error) {
	if !w.first {
		w.first = true
		w.written.Add(int64(len(b)))
		return len(b), nil
	}
	n := w.inFlight.Add(1)
	for m := w.most.Load(); n > m && !w.most.CompareAndSwap(m, n); m = w.most.Load() {
	}
	runtime.Gosched() // let the other writers come
	w.inFlight.Add(-1)
	w.written.Add(int64(len(b)))
	w.writes.Add(1)
	return len(b), nil
}

// However many clients read a large document at once, its writes after
// the first are made by at most document.Workers goroutines at a time.
func TestBulkWritesLeaveAProcessorFree(t *testing.T) {
	defer func(d time.Duration) { bulkWait = d }(bulkWait)
	bulkWait = time.Hour // no write goes ahead unadmitted here
	doc := make([][]byte, 0, 2*bulkFrom/bigPart)
	for range 2 * bulkFrom / bigPart {
		doc = append(doc, make([]byte, bigPart))
	}
	var inFlight, most atomic.Int32
	var written, writes atomic.Int64
	testkit.InParallel(20, func(int) {
		p := document.New(0, 0, doc...)
		if _, err := p.WriteTo(admitted(&bulkLog{inFlight: &inFlight, most: &most, written: &written, writes: &writes}, p)); err != nil {
			t.Error(err)
		}
	})
	if want := int64(20 * 2 * bulkFrom); written.Load() != want {
		t.Fatalf("%d bytes written, want %d", written.Load(), want)
	}
	if m := most.Load(); m < 1 || int(m) > document.Workers() || writes.Load() == 0 {
		t.Errorf("%d bulk writes at once (of %d), want 1 to %d", m, writes.Load(), document.Workers())
	}
	// A small document's writes are never held, even with every
	// admission taken.
	holdEveryTurn(t)
	small := document.New(0, 0, make([]byte, bigPart), make([]byte, bigPart))
	if n, err := small.WriteTo(admitted(io.Discard, small)); err != nil || n != 2*bigPart {
		t.Fatalf("a small document: %d bytes, err %v", n, err)
	}
}

// An admitted write whose client reads slowly holds up the others for
// bulkWait at most: they then go ahead unadmitted.
func TestBulkWritesGoAheadAfterBulkWait(t *testing.T) {
	defer func(d time.Duration) { bulkWait = d }(bulkWait)
	bulkWait = 10 * time.Millisecond
	holdEveryTurn(t)
	p := document.New(0, 0, make([]byte, bulkFrom), make([]byte, bigPart), make([]byte, bigPart))
	start := time.Now()
	if n, err := p.WriteTo(admitted(io.Discard, p)); err != nil || n != bulkFrom+2*bigPart {
		t.Fatalf("wrote %d bytes, err %v", n, err)
	}
	if took := time.Since(start); took < 2*bulkWait {
		t.Errorf("two held writes went ahead after %v, want each after bulkWait (%v)", took, bulkWait)
	}
}

// Both front doors write a large document through the admission: with
// every admission taken, a plain read of a full registry of 16 MB or
// more waits bulkWait at each write after its first (its four
// applications' entries are written as they are: four writes at least).
func TestFrontDoorsAdmitLargeDocuments(t *testing.T) {
	defer func(d time.Duration) { bulkWait = d }(bulkWait)
	bulkWait = 100 * time.Millisecond // well above a read of 20 MB on loopback
	s := registry.New(registry.Config{})
	for n := range 12_000 { // some 20 MB of XML, in four applications: a few large writes
		i := testkit.SampleInstance(n)
		i.App = "APP-" + strconv.Itoa(n%4)
		testkit.MustRegister(t, s, i, false)
	}
	api := NewAPI(s, APIConfig{})
	viaHTTP := httptest.NewServer(NewHTTPHandler(api))
	t.Cleanup(viaHTTP.Close)
	viaFast := NewServer(api, ServerConfig{Addr: "127.0.0.1:0"})
	if err := viaFast.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.StopOnCleanupChecked(t, 5*time.Second, viaFast.Stop)
	read := func(base string) int64 {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+"/eureka/apps/", nil)
		req.Header.Set("Accept", "application/xml")
		req.Header.Set("Accept-Encoding", "identity")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, %d bytes, %v", base, resp.StatusCode, n, err)
		}
		return n
	}
	read(viaHTTP.URL) // the first plain read: kept plain from then on
	if p := s.Documents().Full(eureka.FormatXML); p.Compressed() || p.Len() < bulkFrom {
		t.Fatalf("the full registry: %d bytes, compressed only %v; want plain and bulkFrom (%d) or more", p.Len(), p.Compressed(), bulkFrom)
	}
	holdEveryTurn(t)
	for _, door := range []struct{ name, base string }{{"net/http", viaHTTP.URL}, {"fasthttp", "http://" + viaFast.Addr().String()}} {
		start := time.Now()
		n := read(door.base)
		if took := time.Since(start); took < 3*bulkWait {
			t.Errorf("%s: %d bytes written in %v with every admission held, want a wait of bulkWait (%v) at each write after the first", door.name, n, took, bulkWait)
		}
	}
}

// holdEveryTurn takes every turn of bulkWriters, as stuck writes would,
// until the test ends.
func holdEveryTurn(t *testing.T) {
	sem := bulkWriters()
	for range cap(sem) {
		sem <- struct{}{}
	}
	t.Cleanup(func() {
		for range cap(sem) {
			<-sem
		}
	})
}
