package document

import (
	"cmp"
	"slices"
)

// deltaApp is one application's entry.
type deltaApp struct {
	head, tail     []byte
	headZ, tailZ   []byte // deflated
	headCRC, tailC uint32
	chunks         []*deltaChunk     // by seq, none empty
	where          map[string]uint64 // the seq of the chunk that holds each id
	nextSeq        uint64
	dirty          bool // chunks changed since entry was made
	n              int  // the entry's plain length, when not dirty
	entry          *deltaEntry
}

// deltaChunk is a run of an application's instances, in the order of
// their latest changes. A sealed chunk (one with its piece) is not
// modified, as payloads hold it: a change makes a new chunk in its place
// (with its seq), and so does keeping it in another form.
type deltaChunk struct {
	seq    uint64 // its place among the app's chunks, which only grows
	insts  []deltaInst
	pieces [][]byte // until sealed: each instance's piece
	*piece          // once sealed: the pieces with their separators
}

type deltaInst struct {
	id      string
	version uint64 // of the change it renders
	off, n  int    // its piece in the body, once sealed
}

func (ch *deltaChunk) sealed() bool { return ch.piece != nil }

// plainLen returns the length of the chunk's body, sealed or not.
func (ch *deltaChunk) plainLen(sep []byte) int {
	if ch.sealed() {
		return ch.n
	}
	n := len(sep) * (len(ch.pieces) - 1)
	for _, p := range ch.pieces {
		n += len(p)
	}
	return n
}

// seal makes the chunk's body from its pieces, kept plain or compressed
// only; a body compressed only is written in scratch, which it reuses.
func (ch *deltaChunk) seal(sep []byte, compress bool, scratch *[]byte) {
	var b []byte
	if compress {
		b = (*scratch)[:0]
	} else {
		b = make([]byte, 0, ch.plainLen(sep))
	}
	for k, p := range ch.pieces {
		if k > 0 {
			b = append(b, sep...)
		}
		ch.insts[k].off, ch.insts[k].n = len(b), len(p)
		b = append(b, p...)
	}
	if compress {
		*scratch = b
	}
	ch.piece, ch.pieces = newPiece(b, compress), nil
}

// kept returns the sealed ch in the form a document keeps (piece.kept).
func (ch *deltaChunk) kept(plain bool) *deltaChunk {
	p := ch.piece.kept(plain)
	if p == ch.piece {
		return ch
	}
	return &deltaChunk{seq: ch.seq, insts: ch.insts, piece: p}
}

// chunk returns the index in a.chunks of the chunk of seq.
func (a *deltaApp) chunk(seq uint64) int {
	k, _ := slices.BinarySearchFunc(a.chunks, seq, func(ch *deltaChunk, seq uint64) int { return cmp.Compare(ch.seq, seq) })
	return k
}

// editable returns chunk k of a as a chunk the builder may change: itself
// if not sealed yet, else an unsealed copy in its place.
func (a *deltaApp) editable(k int) *deltaChunk {
	ch := a.chunks[k]
	if !ch.sealed() {
		return ch
	}
	plain := ch.plain()
	a.dirty = true
	out := &deltaChunk{seq: ch.seq, insts: slices.Clone(ch.insts), pieces: make([][]byte, len(ch.insts))}
	for n, in := range ch.insts {
		out.pieces[n] = plain[in.off : in.off+in.n : in.off+in.n]
	}
	a.chunks[k] = out
	return out
}

// remove takes id out of chunk k of a, and the chunk out of a if that
// leaves it empty.
func (a *deltaApp) remove(k int, id string) {
	ch := a.editable(k)
	at := slices.IndexFunc(ch.insts, func(x deltaInst) bool { return x.id == id })
	ch.insts = slices.Delete(ch.insts, at, at+1)
	ch.pieces = slices.Delete(ch.pieces, at, at+1)
	delete(a.where, id)
	if len(ch.insts) == 0 {
		a.chunks = slices.Delete(a.chunks, k, k+1)
	}
}
