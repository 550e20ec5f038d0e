package httpapi

import (
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
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
	sem := bulkWriters()
	for range cap(sem) {
		sem <- struct{}{}
	}
	defer func() {
		for range cap(sem) {
			<-sem
		}
	}()
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
	sem := bulkWriters()
	for range cap(sem) { // every admission held, as by stuck writes
		sem <- struct{}{}
	}
	defer func() {
		for range cap(sem) {
			<-sem
		}
	}()
	p := document.New(0, 0, make([]byte, bulkFrom), make([]byte, bigPart), make([]byte, bigPart))
	start := time.Now()
	if n, err := p.WriteTo(admitted(io.Discard, p)); err != nil || n != bulkFrom+2*bigPart {
		t.Fatalf("wrote %d bytes, err %v", n, err)
	}
	if took := time.Since(start); took < 2*bulkWait {
		t.Errorf("two held writes went ahead after %v, want each after bulkWait (%v)", took, bulkWait)
	}
}
