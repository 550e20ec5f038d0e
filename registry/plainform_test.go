package registry

import (
	"bytes"
	"io"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/document"
)

// The full registry and the delta are kept compressed only until a
// client reads one of them plain in that format; from then on they are
// built plain too, the document being read built again at once. The
// bytes are the same in either form.
func TestPlainFormKeptOnlyOnceReadPlain(t *testing.T) {
	docs := []struct {
		name   string
		get    func(*Store, eureka.Format) *document.Payload
		builds func(*Store) uint64
	}{
		{"full registry", readFull, func(s *Store) uint64 { return s.payloads.builds.Load() }},
		{"delta", readDelta, func(s *Store) uint64 { return s.payloads.deltaBuilds.Load() }},
	}
	reads := []struct {
		name string
		read func(*document.Payload) []byte
	}{
		{"Bytes", (*document.Payload).Bytes},
		{"Reader", func(p *document.Payload) []byte { b, _ := io.ReadAll(p.Reader()); return b }},
		{"WriteTo", func(p *document.Payload) []byte { var b bytes.Buffer; p.WriteTo(&b); return b.Bytes() }},
	}
	for _, doc := range docs {
		for _, read := range reads {
			t.Run(doc.name+"/"+read.name, func(t *testing.T) {
				s, _ := newTestStore(t, Config{})
				for n := range 40 {
					mustRegister(t, s, testkit.SampleInstance(n), false)
				}
				f, other := eureka.FormatJSON, eureka.FormatXML
				p := doc.get(s, f)
				gz := gunzip(t, p.Gzip().Bytes())
				if !p.Compressed() {
					t.Fatal("kept plain before any plain read")
				}
				builds := doc.builds(s)
				if again := doc.get(s, f); again != p {
					t.Fatal("a gzip reader had the document built again")
				}
				plain := read.read(p) // inflated from the compressed form
				if !bytes.Equal(plain, gz) {
					t.Fatal("the plain read differs from the gzip form")
				}
				q := doc.get(s, f)
				if q.Compressed() || q.Version() != p.Version() || doc.builds(s) != builds+1 {
					t.Fatalf("after a plain read: compressed %v, version %d (want %d), %d builds (want 1)",
						q.Compressed(), q.Version(), p.Version(), doc.builds(s)-builds)
				}
				if !bytes.Equal(q.Bytes(), plain) || !bytes.Equal(gunzip(t, q.Gzip().Bytes()), plain) {
					t.Fatal("the document kept plain differs from the one kept compressed")
				}
				if doc.get(s, f) != q {
					t.Fatal("built again after it was kept plain")
				}
				// The other format has had no plain reader.
				if !doc.get(s, other).Compressed() {
					t.Error("the other format is kept plain too")
				}
				// A change keeps the plain form.
				mustRegister(t, s, testkit.SampleInstance(40), false)
				if doc.get(s, f).Compressed() {
					t.Error("compressed only again after a change")
				}
			})
		}
	}
}

// MaxPlainPayload negative keeps the documents plain from the first build,
// and a document over it stays compressed only whoever reads it plain.
func TestPlainFormLimits(t *testing.T) {
	for _, c := range []struct {
		limit      int64
		compressed bool
	}{{-1, false}, {1, true}} {
		s, _ := newTestStore(t, Config{MaxPlainPayload: c.limit})
		for n := range 40 {
			mustRegister(t, s, testkit.SampleInstance(n), false)
		}
		for _, get := range []func(*Store, eureka.Format) *document.Payload{readFull, readDelta} {
			get(s, eureka.FormatJSON).Bytes()
			if p := get(s, eureka.FormatJSON); p.Compressed() != c.compressed {
				t.Errorf("limit %d: compressed %v after a plain read, want %v", c.limit, p.Compressed(), c.compressed)
			}
		}
	}
}

// readFull and readDelta read the full registry and the delta, as a
// client does.
func readFull(s *Store, f eureka.Format) *document.Payload  { return s.Documents().Full(f) }
func readDelta(s *Store, f eureka.Format) *document.Payload { return s.Documents().Delta(f) }
