package registry

import (
	"io"
	"sync"
	"time"
)

// writeRun is how many bytes of small parts writeParts gathers before it
// writes them. A document is hundreds of pieces of a few kilobytes (an
// application's entry, a delta chunk, their deflated forms), and each
// write is a system call and, on loopback, a segment and a wake-up of
// the reader: written one by one they cost four times the CPU of the
// bytes themselves (a gzipped full registry of 10,000 instances, 458 KB:
// 708 µs of server CPU per read part by part, 155 µs gathered in runs of
// a megabyte).
const writeRun = 1 << 20

// bigPart is the length from which writeParts writes a part as it is
// rather than copying it into a run: a write of that much costs its
// bytes, not its system call. At a million instances the full registry's
// application entries and the delta's are tens of kilobytes each, and
// gathering them was a quarter of the server's CPU while fifty clients a
// second read the delta (the copy of 65 MB per read, from memory no
// cache holds).
const bigPart = 32 << 10

// topUp is how much of a big part writeParts copies after the small parts
// gathered before it, so that those (a separator, an entry's head) do not
// go out as a write and a segment of a few bytes.
const topUp = 4 << 10

// runBufs holds the buffers writeParts gathers parts in, one per writer
// at a time.
var runBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, writeRun)
	return &b
}}

// bulkFrom is the size from which a document's writes after the first
// are bulk writes (bulkWriters): the gzipped registry of some 300,000
// instances, the plain one of 15,000. A smaller document takes a few
// milliseconds of copying at most, and its readers get it at full speed
// (at 10,000 instances, plain full fetches flat out: 210 /s, 153 /s when
// paced).
const bulkFrom = 16 << 20

// bulkWriters admits the writes of large documents: as many at once as
// buildWorkers (GOMAXPROCS less one), so that however many clients read
// a 57 MB delta at once, a P is left for heartbeats and registrations.
// Without it fifty clients a second reading the delta at a million
// instances kept every P copying, and a heartbeat waited for the
// scheduler's next look at the network (10 ms, more under load): its p99
// was 29 ms during the deltas, now 5 ms. The first write of each
// document, which carries its header out, is not held.
var bulkWriters = sync.OnceValue(func() chan struct{} { return make(chan struct{}, buildWorkers()) })

// bulkWait is how long a bulk write waits to be admitted before it goes
// ahead anyway: an admitted write whose client reads slowly waits in the
// kernel for room, and must not hold the others up for longer (a
// variable for the tests).
var bulkWait = 5 * time.Millisecond

// bulkWriter is w with each write admitted by bulkWriters.
type bulkWriter struct {
	w     io.Writer
	timer *time.Timer
}

func (b *bulkWriter) Write(p []byte) (int, error) {
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

// writeParts writes parts to w in order: parts shorter than bigPart
// gathered into runs of up to writeRun bytes, longer ones written as they
// are, but for their first topUp bytes when small parts come before them.
// In a document of bulkFrom bytes or more, every write but the first (which
// carries the response's header out) is admitted by bulkWriters. It
// consumes *parts as it goes.
func writeParts(w io.Writer, parts *[][]byte) (int64, error) {
	var n int64
	size := 0
	for _, p := range *parts {
		size += len(p)
	}
	out := w
	write := func(b []byte) error {
		m, err := out.Write(b)
		n += int64(m)
		if size >= bulkFrom && out == w {
			out = &bulkWriter{w: w}
		}
		return err
	}
	if len(*parts) == 1 {
		err := write((*parts)[0])
		*parts = nil
		return n, err
	}
	buf := runBufs.Get().(*[]byte)
	defer runBufs.Put(buf)
	run := (*buf)[:0]
	for len(*parts) > 0 {
		p := (*parts)[0]
		*parts = (*parts)[1:]
		if len(p) < bigPart {
			if len(run)+len(p) > writeRun-topUp { // room for a top-up
				if err := write(run); err != nil {
					return n, err
				}
				run = run[:0]
			}
			run = append(run, p...)
			continue
		}
		if len(run) > 0 {
			run = append(run, p[:topUp]...)
			p = p[topUp:]
			if err := write(run); err != nil {
				return n, err
			}
			run = run[:0]
		}
		if err := write(p); err != nil {
			return n, err
		}
	}
	if len(run) > 0 {
		return n, write(run)
	}
	return n, nil
}
