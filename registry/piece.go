package registry

import (
	"hash/crc32"
	"runtime"
	"sync"
	"sync/atomic"
)

// piece is a run of a document's bytes that documents are assembled
// from (an application's entry in the full registry, a chunk of the
// delta), kept plain, compressed only, or both. It is not modified once
// made, but for gz, made once: keeping it in another form makes a new
// piece.
type piece struct {
	body []byte // nil when kept compressed only
	n    int    // len of the plain bytes
	crc  uint32 // CRC-32 of the plain bytes, for the gzip trailer

	gzOnce sync.Once
	gz     []byte // the plain bytes as a flushed deflate piece
}

// newPiece returns a piece of b, which it keeps plain (b is then the
// piece's own), or compressed only.
func newPiece(b []byte, compress bool) *piece {
	p := &piece{n: len(b), crc: crc32.ChecksumIEEE(b)}
	if compress {
		gz := deflate(b, false)
		p.gzOnce.Do(func() { p.gz = gz })
	} else {
		p.body = b
	}
	return p
}

// deflated returns the piece as a flushed deflate piece, compressing it
// on first use.
func (p *piece) deflated() []byte {
	p.gzOnce.Do(func() { p.gz = deflate(p.body, false) })
	return p.gz
}

// plain returns the plain bytes, inflated if the piece is kept
// compressed only.
func (p *piece) plain() []byte {
	if p.body != nil {
		return p.body
	}
	return inflatePiece(p.gz, p.n)
}

// compressedOnly returns p without its plain body.
func (p *piece) compressedOnly() *piece {
	if p.body == nil {
		return p
	}
	out := &piece{n: p.n, crc: p.crc}
	gz := p.deflated()
	out.gzOnce.Do(func() { out.gz = gz })
	return out
}

// withPlain returns p with its plain body, inflated if it was kept
// compressed only.
func (p *piece) withPlain() *piece {
	if p.body != nil {
		return p
	}
	out := &piece{n: p.n, crc: p.crc, body: inflatePiece(p.gz, p.n)}
	out.gzOnce.Do(func() { out.gz = p.gz })
	return out
}

// withDeflated returns p with its deflated bytes at gz, which holds the
// same bytes as p's own.
func (p *piece) withDeflated(gz []byte) *piece {
	out := &piece{body: p.body, n: p.n, crc: p.crc}
	out.gzOnce.Do(func() { out.gz = gz })
	return out
}

// kept returns p in the form a document keeps: plain, or compressed only.
func (p *piece) kept(plain bool) *piece {
	if plain {
		return p.withPlain()
	}
	return p.compressedOnly()
}

// document is what a payload is assembled from: head, entries separated
// by sep, tail. An entry is given by two functions: plain appends its
// plain parts, deflated its deflate pieces and returns their CRC-32 and
// plain length.
type document struct {
	head, tail, sep []byte
	entries         int
	parts           int // how many parts (plain, or deflated if more) the entries have in all, if more than one each
	plain           func(dst [][]byte, k int) [][]byte
	deflated        func(dst [][]byte, k int) ([][]byte, uint32, int)
}

// payload assembles d at version: plain with its gzip form made on
// first use from the entries' deflate pieces, or compressed only.
func (d *document) payload(version uint64, built int64, plain bool) *Payload {
	if !plain {
		z, crc, total := d.gzipped()
		return newCompressedPayload(version, built, total, crc, z)
	}
	parts := make([][]byte, 0, max(d.parts, 2*d.entries+2))
	parts = append(parts, d.head)
	for k := range d.entries {
		if k > 0 && len(d.sep) > 0 {
			parts = append(parts, d.sep)
		}
		parts = d.plain(parts, k)
	}
	parts = append(parts, d.tail)
	p := newPayload(version, built, parts...)
	p.gzip = func() [][]byte {
		z, crc, _ := d.gzipped()
		return gzipMember(crc, p.Len(), z...)
	}
	return p
}

// gzipped returns d's deflate pieces, final block included, with the
// CRC-32 and length of its plain bytes.
func (d *document) gzipped() ([][]byte, uint32, int) {
	z := make([][]byte, 0, max(d.parts, 2*d.entries)+3)
	z = append(z, deflate(d.head, false))
	crc, total := crc32.ChecksumIEEE(d.head), len(d.head)
	sepCRC := crc32.ChecksumIEEE(d.sep)
	for k := range d.entries {
		if k > 0 && len(d.sep) > 0 {
			z = append(z, deflatedSeparator)
			crc, total = crc32Combine(crc, sepCRC, len(d.sep)), total+len(d.sep)
		}
		var c uint32
		var n int
		z, c, n = d.deflated(z, k)
		crc, total = crc32Combine(crc, c, n), total+n
	}
	z = append(z, deflate(d.tail, false), finalBlock)
	crc = crc32Combine(crc, crc32.ChecksumIEEE(d.tail), len(d.tail))
	return z, crc, total + len(d.tail)
}

// deflatedSeparator is the JSON separator as a deflate piece.
var deflatedSeparator = deflate([]byte{','}, false)

// buildWorkers returns how many goroutines a build encodes and
// compresses on: one fewer than GOMAXPROCS, and at least one. With every
// P busy, Go's scheduler takes up a connection's next request only when
// a goroutine is preempted (10 ms) or blocks, so a build on every CPU
// held heartbeats up to hundreds of milliseconds while a million
// instances were encoded; with one P free they are answered at once.
func buildWorkers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// inParallel calls work for every k below n, on buildWorkers goroutines
// (in the caller's when n is below least or there is one worker), each
// with a scratch buffer of its own, and returns when all calls have.
func inParallel(n, least int, work func(k int, scratch *[]byte)) {
	workers := min(buildWorkers(), n)
	if n < least || workers <= 1 {
		// A change's few chunks, one stale app: no goroutine to start.
		var scratch []byte
		for k := range n {
			work(k, &scratch)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch []byte
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				work(k, &scratch)
			}
		}()
	}
	wg.Wait()
}
