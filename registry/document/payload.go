package document

import (
	"bytes"
	"compress/flate"
	"hash/crc32"
	"io"
	"sync"
	"sync/atomic"
)

// Payload is a serialized document, kept until the registry changes and
// served as is. Its bytes are held as parts, written one after another, so
// that a document assembled from cached pieces (the full registry is one
// piece per application) is never copied whole, neither when it is built
// nor when it is served. Its gzip form is made on first use, from the
// pieces' own cached compressed forms where it has them.
type Payload struct {
	parts [][]byte
	size  int

	version uint64 // the registry (or app) version it was built at
	purges  uint64 // for deltas: the change log's purge count
	counter int64  // for deltas: versions__delta
	// rversion is the remote regions' version, for reads merged with
	// them (MergedPayload).
	rversion uint64
	built    int64 // ms

	gzipOnce sync.Once
	gzip     func() [][]byte         // builds the gzip parts; nil: compress the whole
	gz       atomic.Pointer[Payload] // set once, by gzipOnce: read by GzipMade

	// z, for a document kept compressed only (larger than
	// Config.MaxPlainPayload), is its deflate stream in pieces, the last
	// one final; parts is then nil and a plain read inflates z as it goes.
	z [][]byte

	// plainRead, for the full registry and the delta, is set by the
	// first plain read (Parts, Bytes, WriteTo, Reader), so that the cache
	// that keeps them keeps them plain from then on (TrackPlainReads).
	plainRead *atomic.Bool
}

// readPlain notes a plain read.
func (p *Payload) readPlain() {
	if p.plainRead != nil && !p.plainRead.Load() {
		p.plainRead.Store(true)
	}
}

// newCompressedPayload returns a document of size plain bytes held only
// as the deflate pieces z (the last final) of CRC-32 crc: its gzip form
// is z framed, its plain form z inflated on each read.
func newCompressedPayload(version uint64, built int64, size int, crc uint32, z [][]byte) *Payload {
	p := &Payload{size: size, version: version, built: built, z: z}
	p.gzip = func() [][]byte { return gzipMember(crc, size, z...) }
	return p
}

// Compressed reports whether the document is kept compressed only: a
// plain read inflates it (Reader, WriteTo), and Parts and Bytes make a
// copy of it whole.
func (p *Payload) Compressed() bool { return p.z != nil }

// inflater reads a compressed-only document's plain bytes.
func (p *Payload) inflater() io.Reader {
	rs := make([]io.Reader, len(p.z))
	for n, z := range p.z {
		rs[n] = bytes.NewReader(z)
	}
	return flate.NewReader(io.MultiReader(rs...))
}

// Whole returns b, a document built whole, kept plain, or compressed
// only (its plain bytes left to the collector) when plain is false.
func Whole(version uint64, built int64, b []byte, plain bool) *Payload {
	if plain {
		return New(version, built, b)
	}
	return newCompressedPayload(version, built, len(b), crc32.ChecksumIEEE(b), [][]byte{deflate(b, true)})
}

// New returns the document made of parts, in order, kept plain; its gzip
// form is made on first use.
func New(version uint64, built int64, parts ...[]byte) *Payload {
	p := &Payload{parts: parts, version: version, built: built}
	for _, b := range parts {
		p.size += len(b)
	}
	return p
}

// Version returns the registry version the document reflects (for one
// application's document, the version of that application's last
// change): a reader may watch for the changes after it.
func (p *Payload) Version() uint64 { return p.version }

// Built returns when the document was built, in milliseconds since the
// epoch.
func (p *Payload) Built() int64 { return p.built }

// Purges returns the change log's purge count SetDelta noted of a delta
// document.
func (p *Payload) Purges() uint64 { return p.purges }

// Counter returns the versions__delta SetDelta noted of a delta document.
func (p *Payload) Counter() int64 { return p.counter }

// SetDelta notes, on a delta document not yet handed to a reader, the
// change log's purge count and the versions__delta it was built at.
func (p *Payload) SetDelta(purges uint64, counter int64) { p.purges, p.counter = purges, counter }

// RemoteVersion returns the remote regions' version a document read with
// regions reflects (0 for any other).
func (p *Payload) RemoteVersion() uint64 { return p.rversion }

// SetRemoteVersion notes, on a document read with regions not yet handed
// to a reader, the remote regions' version it reflects.
func (p *Payload) SetRemoteVersion(v uint64) { p.rversion = v }

// TrackPlainReads makes the document's plain reads set read, which the
// cache that keeps it shares among the documents of one kind and format:
// a document kept compressed only is then built again, plain
// (PlainWanted).
func (p *Payload) TrackPlainReads(read *atomic.Bool) { p.plainRead = read }

// PlainWanted reports whether the document is kept compressed only though
// a plain read of its kind has been made since (TrackPlainReads).
func (p *Payload) PlainWanted() bool {
	return p.z != nil && p.plainRead != nil && p.plainRead.Load()
}

// Len returns the document's size in bytes.
func (p *Payload) Len() int { return p.size }

// Parts returns the document's bytes in order. They are shared and must not
// be modified. A Compressed document is inflated into one new part.
func (p *Payload) Parts() [][]byte {
	p.readPlain()
	if p.z != nil {
		return [][]byte{p.Bytes()}
	}
	return p.parts
}

// Bytes returns the document in one slice: its only part, or a copy of the
// parts joined.
func (p *Payload) Bytes() []byte {
	p.readPlain()
	if p.z != nil {
		out := make([]byte, 0, p.size)
		buf := bytes.NewBuffer(out)
		io.Copy(buf, p.inflater())
		return buf.Bytes()
	}
	if len(p.parts) == 1 {
		return p.parts[0]
	}
	out := make([]byte, 0, p.size)
	for _, b := range p.parts {
		out = append(out, b...)
	}
	return out
}

// WriteTo writes the document to w, its parts gathered into large writes
// (writeParts).
func (p *Payload) WriteTo(w io.Writer) (int64, error) {
	p.readPlain()
	if p.z != nil {
		return io.Copy(w, p.inflater())
	}
	parts := p.parts
	return writeParts(w, &parts)
}

// Reader returns a reader of the document that does not copy it first.
// A writer that asks (io.WriterTo) gets its parts gathered into large
// writes (writeParts), as WriteTo writes them.
func (p *Payload) Reader() io.Reader {
	p.readPlain()
	if p.z != nil {
		return p.inflater()
	}
	return &partsReader{parts: p.parts}
}

// partsReader reads parts, which it shares with its payload and does not
// modify: off is how far it has read into parts[0].
type partsReader struct {
	parts [][]byte
	off   int
}

func (r *partsReader) Read(b []byte) (int, error) {
	for len(r.parts) > 0 && r.off == len(r.parts[0]) {
		r.parts, r.off = r.parts[1:], 0
	}
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(b, r.parts[0][r.off:])
	r.off += n
	return n, nil
}

func (r *partsReader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	if len(r.parts) > 0 && r.off > 0 {
		m, err := w.Write(r.parts[0][r.off:])
		n += int64(m)
		if err != nil {
			return n, err
		}
		r.parts, r.off = r.parts[1:], 0
	}
	m, err := writeParts(w, &r.parts)
	return n + m, err
}

// Gzip returns the document gzip-compressed, compressing it once.
func (p *Payload) Gzip() *Payload {
	p.gzipOnce.Do(func() {
		var parts [][]byte
		if p.gzip != nil {
			parts = p.gzip()
		} else {
			body := p.Bytes()
			parts = gzipMember(crc32.ChecksumIEEE(body), len(body), deflate(body, true))
		}
		p.gz.Store(New(p.version, p.built, parts...))
	})
	return p.gz.Load()
}

// GzipMade reports whether the gzip form has been made (Gzip).
func (p *Payload) GzipMade() bool { return p.gz.Load() != nil }
