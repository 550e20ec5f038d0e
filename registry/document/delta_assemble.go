package document

import (
	"hash/crc32"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry/internal/deltacut"
)

// Assemble returns the document at version with versions__delta counter
// and hash, sealing the chunks that changed. Its gzip form is made from
// the chunks' own compressed forms; a document larger than keepPlain
// allows is kept compressed only. Each application's entry is put
// together again only when its chunks changed (entry), so that a version
// costs its changes and a walk of the applications.
func (d *Delta) Assemble(version uint64, built, counter int64, hash string, keepPlain func(int) bool) *Payload {
	f := d.f
	sep := eureka.ApplicationsSeparator(f)
	head := eureka.AppendApplicationsHead(nil, f, counter, hash)
	tail := eureka.AppendApplicationsTail(nil, f)
	size := len(head) + len(tail)
	var unsealed []*deltaChunk
	for _, name := range d.names {
		a := d.apps[name]
		if a.dirty {
			a.n = len(a.head) + len(a.tail)
			for k, ch := range a.chunks {
				a.n += ch.plainLen(sep)
				if k > 0 {
					a.n += len(sep)
				}
				if !ch.sealed() {
					unsealed = append(unsealed, ch)
				}
			}
		}
		size += a.n + len(sep)
	}
	plain := keepPlain(size)
	d.size = size
	if plain != d.plain {
		d.plain = plain
		for _, a := range d.apps {
			a.dirty = true
		}
	}
	// Sealed in the form the document is kept in, on Workers when they
	// are many (after a mass registration, a gigabyte to compress), so
	// that a document kept compressed never holds its chunks plain too.
	inParallel(len(unsealed), 64, func(k int, scratch *[]byte) {
		unsealed[k].seal(sep, !plain, scratch)
		unsealed[k].deflated() // what makeEntry takes, and clients read
	})
	apps := make([]*deltaEntry, len(d.names))
	nparts := 2
	for n, name := range d.names {
		a := d.apps[name]
		if a.dirty {
			a.entry = a.makeEntry(sep, plain)
			a.dirty = false
		}
		apps[n] = a.entry
		nparts += max(len(a.entry.parts), len(a.entry.z)) + 1
	}
	doc := &assembly{head: head, tail: tail, sep: sep, entries: len(apps), parts: nparts,
		plain: func(dst [][]byte, k int) [][]byte { return append(dst, apps[k].parts...) },
		deflated: func(dst [][]byte, k int) ([][]byte, uint32, int) {
			return append(dst, apps[k].z...), apps[k].crc, apps[k].n
		},
	}
	return doc.payload(version, built, plain)
}

// deltaEntry is one application's entry, put together: its plain parts
// (none when kept compressed only), its deflated pieces, and the CRC-32
// and length of its plain bytes. Payloads share it; it is not modified.
type deltaEntry struct {
	parts [][]byte
	z     [][]byte
	crc   uint32
	n     int
}

// makeEntry puts a's entry together, its chunks kept plain or compressed
// only. Its deflated pieces are made now: the gzip form is what clients
// read.
func (a *deltaApp) makeEntry(sep []byte, plain bool) *deltaEntry {
	e := &deltaEntry{z: make([][]byte, 0, 2*len(a.chunks)+1)}
	if plain {
		e.parts = make([][]byte, 0, 2*len(a.chunks)+1)
		e.parts = append(e.parts, a.head)
	}
	e.z = append(e.z, a.headZ)
	crc, n := a.headCRC, len(a.head)
	sepCRC := crc32.ChecksumIEEE(sep)
	for k, ch := range a.chunks {
		ch = ch.kept(plain)
		a.chunks[k] = ch
		if k > 0 && len(sep) > 0 {
			if plain {
				e.parts = append(e.parts, sep)
			}
			e.z = append(e.z, deflatedSeparator)
			crc, n = crc32Combine(crc, sepCRC, len(sep)), n+len(sep)
		}
		if plain {
			e.parts = append(e.parts, ch.body)
		}
		e.z = append(e.z, ch.deflated())
		crc, n = crc32Combine(crc, ch.crc, ch.n), n+ch.n
	}
	if plain {
		e.parts = append(e.parts, a.tail)
	}
	e.z = append(e.z, a.tailZ)
	e.crc, e.n = crc32Combine(crc, a.tailC, len(a.tail)), n+len(a.tail)
	a.flatten(e, len(sep) > 0)
	return e
}

// flatten makes e's deflated pieces one run of bytes when they add up to
// a part that writeParts writes as it is (an application of a thousand
// instances: 65 KB in 33 pieces), so that a read writes the entry without
// gathering it first; the chunks then keep their deflated bytes in that
// run, not in pieces of their own, so that memory holds them once.
// seps is whether a separator (deflatedSeparator) stands between the
// chunks, as makeEntry puts them.
func (a *deltaApp) flatten(e *deltaEntry, seps bool) {
	total := 0
	for _, z := range e.z {
		total += len(z)
	}
	if total < deltacut.FlattenFrom {
		return
	}
	flat, each := joinRuns(e.z, 0)
	at := 1 // e.z: the head, the chunks with their separators, the tail
	for k, ch := range a.chunks {
		if k > 0 && seps {
			at++
		}
		a.chunks[k] = &deltaChunk{seq: ch.seq, insts: ch.insts, piece: ch.piece.withDeflated(each[at])}
		at++
	}
	e.z = [][]byte{flat}
}
