package document

import (
	"hash/crc32"
	"sync"
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

// joinRuns copies zs, in order, into one new array with spare bytes of
// room after them, and returns the copy with each one's bytes in it
// (capped, so that no append reaches the next): an application's
// deflated pieces made one run (deltaApp.flatten, fragment.flatten).
func joinRuns(zs [][]byte, spare int) (run []byte, each [][]byte) {
	total := 0
	for _, z := range zs {
		total += len(z)
	}
	run = make([]byte, 0, total+spare)
	each = make([][]byte, len(zs))
	for k, z := range zs {
		off := len(run)
		run = append(run, z...)
		each[k] = run[off:len(run):len(run)]
	}
	return run, each
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
