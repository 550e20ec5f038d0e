package httpapi

import (
	"io"
	"sync"
	"time"

	"github.com/eurekagate/eurekagate/registry/document"
)

// Write admission: the front doors write a large document's bytes
// through bulkWriters, so that its readers, however many, leave a
// processor to the writes of the registry (heartbeats, registrations).
// A document read plain while kept compressed only is written as it is
// inflated, and is not held.

// bulkFrom is the size from which a document's writes after the first
// are bulk writes (bulkWriters): the gzipped registry of some 300,000
// instances, the plain one of 15,000. A smaller document takes a few
// milliseconds of copying at most, and its readers get it at full
// speed.
const bulkFrom = 16 << 20

// bulkWriters admits the writes of large documents: as many at once as
// document.Workers (GOMAXPROCS less one), so that however many clients
// read a 57 MB delta at once, a P is left for heartbeats and
// registrations. Without it fifty clients a second reading the delta at
// a million instances kept every P copying, and a heartbeat waited for
// the scheduler's next look at the network (10 ms, more under load). The
// first write of each document, which carries its header out, is not
// held.
var bulkWriters = sync.OnceValue(func() chan struct{} { return make(chan struct{}, document.Workers()) })

// bulkWait is how long a bulk write waits to be admitted before it goes
// ahead anyway: an admitted write whose client reads slowly waits in the
// kernel for room, and must not hold the others up for longer (a
// variable for the tests).
var bulkWait = 5 * time.Millisecond

// bulkWriter is w with each write but the first admitted by bulkWriters.
type bulkWriter struct {
	w       io.Writer
	started bool // the first write went out
	timer   *time.Timer
}

func (b *bulkWriter) Write(p []byte) (int, error) {
	if !b.started {
		b.started = true
		return b.w.Write(p)
	}
	sem := bulkWriters()
	select {
	case sem <- struct{}{}:
	default:
		if b.timer == nil {
			b.timer = time.NewTimer(bulkWait)
		} else {
			b.timer.Reset(bulkWait)
		}
		select {
		case sem <- struct{}{}:
			b.timer.Stop()
		case <-b.timer.C:
			return b.w.Write(p)
		}
	}
	defer func() { <-sem }()
	return b.w.Write(p)
}

// admitted returns w, through which p is written, admitted by
// bulkWriters when p is a bulk document (bulkFrom).
func admitted(w io.Writer, p *document.Payload) io.Writer {
	if !bulk(p) {
		return w
	}
	return &bulkWriter{w: w}
}

// admittedReader returns p's reader, whose writes (io.WriterTo, as
// fasthttp writes a body stream) are admitted by bulkWriters when p is a
// bulk document (bulkFrom).
func admittedReader(p *document.Payload) io.Reader {
	r := p.Reader()
	if !bulk(p) {
		return r
	}
	return &bulkReader{r: r}
}

func bulk(p *document.Payload) bool { return !p.Compressed() && p.Len() >= bulkFrom }

// bulkReader is a document's reader whose writes go through bulkWriter.
type bulkReader struct{ r io.Reader }

func (b *bulkReader) Read(p []byte) (int, error) { return b.r.Read(p) }

// WriteTo writes through the document's own WriteTo: a plain document's
// reader has one (writeParts' runs).
func (b *bulkReader) WriteTo(w io.Writer) (int64, error) {
	return b.r.(io.WriterTo).WriteTo(&bulkWriter{w: w})
}
