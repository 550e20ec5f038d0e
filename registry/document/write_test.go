package document

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// writeLog records each write it is given.
type writeLog struct {
	bytes.Buffer
	writes []int
	failAt int // the write that fails, from 1; 0 for none
}

func (w *writeLog) Write(b []byte) (int, error) {
	w.writes = append(w.writes, len(b))
	if len(w.writes) == w.failAt {
		return 0, errors.New("connection reset")
	}
	return w.Buffer.Write(b)
}

func TestWritePartsGathersSmallParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var parts [][]byte
	var want []byte
	large := 0
	for k := range 3000 {
		n := rng.IntN(8 << 10) // the size of an app's entry or a delta chunk
		if k%500 == 0 {
			n = writeRun + k // now and then a piece larger than a run
			large++
		}
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		parts = append(parts, p)
		want = append(want, p...)
	}
	var w writeLog
	left := parts
	n, err := writeParts(&w, &left)
	if err != nil || n != int64(len(want)) || len(left) != 0 {
		t.Fatalf("wrote %d of %d bytes, %d parts left, err %v", n, len(want), len(left), err)
	}
	if !bytes.Equal(w.Bytes(), want) {
		t.Fatal("the bytes written are not the parts in order")
	}
	// Each run but those cut short by a large part is over half full.
	if most := 2*len(want)/writeRun + 2*large + 1; len(w.writes) > most {
		t.Errorf("%d writes for %d bytes in %d parts, want at most %d", len(w.writes), len(want), len(parts), most)
	}

	// A single part goes out as it is; a failed write stops the rest.
	w = writeLog{}
	one := [][]byte{[]byte("the whole document")}
	if n, err := writeParts(&w, &one); err != nil || n != 18 || len(w.writes) != 1 {
		t.Errorf("one part: %d bytes in %v writes, err %v", n, w.writes, err)
	}
	w = writeLog{failAt: 1}
	left = parts
	if _, err := writeParts(&w, &left); err == nil || len(w.writes) != 1 {
		t.Errorf("after a failed write: %d writes, err %v", len(w.writes), err)
	}
}

func TestPayloadWritesAsItReads(t *testing.T) {
	parts := [][]byte{[]byte(`{"applications":{`), bytes.Repeat([]byte("x"), 5000), []byte(`,`), bytes.Repeat([]byte("y"), writeRun), []byte(`}}`)}
	p := New(1, 0, parts...)
	var written, read writeLog
	if _, err := p.WriteTo(&written); err != nil {
		t.Fatal(err)
	}
	if _, err := read.ReadFrom(p.Reader()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(written.Bytes(), p.Bytes()) || !bytes.Equal(read.Bytes(), p.Bytes()) {
		t.Error("WriteTo or Reader differs from the document")
	}
	// Part of it read, then the rest written: the reader shares the
	// payload's parts and leaves them as they are.
	r := p.Reader()
	head := make([]byte, 10)
	if _, err := io.ReadFull(r, head); err != nil {
		t.Fatal(err)
	}
	var rest writeLog
	if _, err := r.(io.WriterTo).WriteTo(&rest); err != nil {
		t.Fatal(err)
	}
	if got := append(head, rest.Bytes()...); !bytes.Equal(got, p.Bytes()) {
		t.Error("a read in two steps differs from the document")
	}
	if len(p.Parts()) != len(parts) || len(p.Parts()[0]) != len(`{"applications":{`) {
		t.Error("reading the document changed its parts")
	}
}

// At a million instances the entries are tens of kilobytes, between
// separators of a byte: each entry goes out as it is, but for the top-up
// that carries the separator before it, so that no write is a few bytes
// and no more than topUp of an entry is copied.
func TestWritePartsWritesBigPartsAsTheyAre(t *testing.T) {
	var parts [][]byte
	var want []byte
	for k := range 200 {
		if k > 0 {
			parts = append(parts, []byte{','})
			want = append(want, ',')
		}
		p := bytes.Repeat([]byte{byte('a' + k%26)}, bigPart+k*97)
		parts = append(parts, p)
		want = append(want, p...)
	}
	var w writeLog
	left := parts
	n, err := writeParts(&w, &left)
	if err != nil || n != int64(len(want)) || !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("wrote %d of %d bytes (equal: %v), err %v", n, len(want), bytes.Equal(w.Bytes(), want), err)
	}
	// The first entry in one write; each later one in two: its separator
	// with its first topUp bytes, then the rest as it is.
	if len(w.writes) != 1+2*199 {
		t.Fatalf("%d writes, want %d", len(w.writes), 1+2*199)
	}
	for k, m := range w.writes[1:] {
		if k%2 == 0 && m != 1+topUp {
			t.Fatalf("write %d is %d bytes, want the separator and a top-up of %d", k+1, m, topUp)
		}
	}
}
