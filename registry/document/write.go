package document

import (
	"io"
	"sync"
)

// writeRun is how many bytes of small parts writeParts gathers before it
// writes them. A document is hundreds of pieces of a few kilobytes (an
// application's entry, a delta chunk, their deflated forms), and each
// write is a system call and, on loopback, a segment and a wake-up of
// the reader: written one by one they cost four times the CPU of the
// bytes themselves (docs/performance.md, The Store).
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

// writeParts writes parts to w in order: parts shorter than bigPart
// gathered into runs of up to writeRun bytes, longer ones written as they
// are, but for their first topUp bytes when small parts come before them.
// It consumes *parts as it goes.
func writeParts(w io.Writer, parts *[][]byte) (int64, error) {
	var n int64
	write := func(b []byte) error {
		m, err := w.Write(b)
		n += int64(m)
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
