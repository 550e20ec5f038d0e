package registry

import (
	"io"
	"sync"
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

	version uint64 // the Store (or app) version it was built at
	purges  uint64 // for deltas: the change log's purge count
	built   int64  // ms

	gzipOnce sync.Once
	gzip     func() [][]byte // builds the gzip parts; nil: compress the whole
	gz       *Payload
}

func newPayload(version uint64, built int64, parts ...[]byte) *Payload {
	p := &Payload{parts: parts, version: version, built: built}
	for _, b := range parts {
		p.size += len(b)
	}
	return p
}

// Len returns the document's size in bytes.
func (p *Payload) Len() int { return p.size }

// Parts returns the document's bytes in order. They are shared and must not
// be modified.
func (p *Payload) Parts() [][]byte { return p.parts }

// Bytes returns the document in one slice: its only part, or a copy of the
// parts joined.
func (p *Payload) Bytes() []byte {
	if len(p.parts) == 1 {
		return p.parts[0]
	}
	out := make([]byte, 0, p.size)
	for _, b := range p.parts {
		out = append(out, b...)
	}
	return out
}

// WriteTo writes the document to w, part by part.
func (p *Payload) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, b := range p.parts {
		m, err := w.Write(b)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Reader returns a reader of the document that does not copy it first.
func (p *Payload) Reader() io.Reader {
	readers := make([]io.Reader, len(p.parts))
	for n, b := range p.parts {
		readers[n] = (*partReader)(&b)
	}
	return io.MultiReader(readers...)
}

type partReader []byte

func (r *partReader) Read(b []byte) (int, error) {
	if len(*r) == 0 {
		return 0, io.EOF
	}
	n := copy(b, *r)
	*r = (*r)[n:]
	return n, nil
}

// Gzip returns the document gzip-compressed, compressing it once.
func (p *Payload) Gzip() *Payload {
	p.gzipOnce.Do(func() {
		var parts [][]byte
		if p.gzip != nil {
			parts = p.gzip()
		} else {
			parts = gzipMember(p.parts, deflate(p.Bytes(), true))
		}
		p.gz = newPayload(p.version, p.built, parts...)
	})
	return p.gz
}
