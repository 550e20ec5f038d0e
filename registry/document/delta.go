package document

import (
	"cmp"
	"hash/crc32"
	"slices"
	"strings"
	"sync"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry/internal/deltacut"
)

// The delta, kept incrementally: each change's instance is encoded once,
// when the first delta after it is built, and the document is assembled
// from those pieces, so that a new version costs the changes since the
// last one, not the whole retention window. After a mass registration (a
// cluster's cold start, a region coming back) the delta holds every
// instance registered in the last DeltaRetention; rebuilding it whole at
// each version would re-encode all of them every time.
//
// The document holds each changed instance once, in its state at its
// latest retained change (what Eureka's recentlyChangedQueue renders,
// but for the lease's timestamps, which are those of that change, as
// registry.ChangesDocument has them), applications sorted by name and
// each one's instances in the order of their latest changes, as Eureka's
// queue has them: the registry writes the same document whole, which its
// tests compare this one with, byte for byte. That order makes a change
// an append to its application's last chunk, whatever its id, so that a
// mass registration can be folded in ahead of the first reader (the
// registry's Prebuild) at the cost of the chunks it adds, and a purge
// drops the oldest chunks whole.

// Delta is the delta of one format, kept incrementally. It is not safe
// for concurrent use: its owner folds and assembles it under one lock.
type Delta struct {
	f     eureka.Format
	plain bool     // the form of the last document
	size  int      // the length of the last document
	upTo  uint64   // the version of the last change folded in
	base  uint64   // the change log's base at that fold
	names []string // sorted, the apps with instances
	apps  map[string]*deltaApp
	// folded is every change folded in, oldest first, so that a purge of
	// the log can drop the instances whose latest change it took.
	folded []foldedChange
}

type foldedChange struct {
	version uint64
	app, id string
}

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

// NewDelta returns an empty delta of format f over a change log whose
// base (the version just before its first change) is base.
func NewDelta(f eureka.Format, base uint64) *Delta {
	return &Delta{f: f, apps: map[string]*deltaApp{}, upTo: base, base: base}
}

// UpTo returns the version of the last change folded in.
func (d *Delta) UpTo() uint64 { return d.upTo }

// Change is what the delta needs of a change to the registry: the
// version it made and the instance it changed.
type Change struct {
	Version uint64
	App, ID string
}

// pending is a change to fold in: change k of those Fold was given.
type pending struct {
	Change
	k int
}

// Fold brings the document to the changes of the retained log: it drops
// the instances whose latest change the log no longer holds (base moved)
// and adds or replaces the instances of the n changes, oldest first,
// that change(k) names (those after UpTo). render(k) is change k's
// instance as the delta shows it; keepPlain says whether a document of
// a size is kept plain as well as compressed.
func (d *Delta) Fold(count int, change func(k int) Change, base uint64, render func(k int) eureka.InstanceInfo, keepPlain func(int) bool) {
	if base > d.base {
		n := 0
		for n < len(d.folded) && d.folded[n].version <= base {
			n++
		}
		d.purge(d.folded[:n], !keepPlain(d.size))
		d.folded = append(d.folded[:0:0], d.folded[n:]...)
		d.base = base
	}
	var todo []pending
	for k := range count {
		if c := change(k); c.Version > d.upTo {
			todo = append(todo, pending{c, k})
		}
	}
	if len(todo) == 0 {
		return
	}
	d.upTo = todo[len(todo)-1].Version
	if len(todo) > 1 {
		// Only each instance's latest change is shown: the others are not
		// encoded.
		type key struct{ app, id string }
		latest := make(map[key]int, len(todo))
		for k, c := range todo {
			latest[key{c.App, c.ID}] = k
		}
		kept := todo[:0]
		for k, c := range todo {
			if latest[key{c.App, c.ID}] == k {
				kept = append(kept, c)
			}
		}
		todo = kept
	}
	for _, c := range todo {
		d.folded = append(d.folded, foldedChange{c.Version, c.App, c.ID})
	}
	if len(todo) <= deltacut.FoldBatch {
		d.put(todo, d.encode(todo, render))
		return
	}
	// Many changes (the first delta after a mass registration: a
	// gigabyte of instances): app by app, each app's in order, a batch
	// at a time, each batch's chunks sealed before the next is encoded,
	// so that the fold holds one batch plain, not the whole retention
	// window, and seals an application's last chunk once, not once a
	// batch.
	slices.SortFunc(todo, func(a, b pending) int { return byAppInOrder(a.App, a.Version, b.App, b.Version) })
	encoded := 0
	for from := 0; from < len(todo); from += deltacut.FoldBatch {
		batch := todo[from:min(from+deltacut.FoldBatch, len(todo))]
		pieces := d.encode(batch, render)
		for _, p := range pieces {
			encoded += len(p)
		}
		d.put(batch, pieces)
		// Sealed in the form the document is likely to be kept in: its
		// last size and what the fold adds, at the rate so far.
		compress := !keepPlain(d.size + encoded*len(todo)/(from+len(batch)))
		d.seal(len(batch), func(k int) string { return batch[k].App }, compress)
	}
}

// byAppInOrder orders changes as the delta holds their instances: by
// app, then version.
func byAppInOrder(appA string, vA uint64, appB string, vB uint64) int {
	if c := strings.Compare(appA, appB); c != 0 {
		return c
	}
	return cmp.Compare(vA, vB)
}

// purge drops the instances of gone, changes whose latest the log no
// longer holds. Many of them (a mass registration leaving the retention
// window) are dropped app by app, a batch at a time, each
// batch's chunks sealed again (compressed only if compress) before the
// next, so that the purge holds one batch plain, not every chunk it
// edits. gone is sorted in place.
func (d *Delta) purge(gone []foldedChange, compress bool) {
	if len(gone) <= deltacut.FoldBatch {
		for _, fc := range gone {
			d.drop(fc.app, fc.id, fc.version)
		}
		return
	}
	slices.SortFunc(gone, func(a, b foldedChange) int { return byAppInOrder(a.app, a.version, b.app, b.version) })
	for from := 0; from < len(gone); from += deltacut.FoldBatch {
		batch := gone[from:min(from+deltacut.FoldBatch, len(gone))]
		for _, fc := range batch {
			d.drop(fc.app, fc.id, fc.version)
		}
		d.seal(len(batch), func(k int) string { return batch[k].app }, compress)
	}
}

// seal seals the chunks not sealed yet of n apps, app(k) for k below n,
// sorted, kept plain or compressed only.
func (d *Delta) seal(n int, app func(k int) string, compress bool) {
	sep := eureka.ApplicationsSeparator(d.f)
	var unsealed []*deltaChunk
	for k := range n {
		if k > 0 && app(k-1) == app(k) {
			continue
		}
		a := d.apps[app(k)]
		if a == nil {
			continue
		}
		for _, ch := range a.chunks {
			if !ch.sealed() {
				unsealed = append(unsealed, ch)
			}
		}
	}
	inParallel(len(unsealed), 64, func(k int, scratch *[]byte) {
		unsealed[k].seal(sep, compress, scratch)
		unsealed[k].deflated()
	})
}

// encode renders the changes' pieces, on Workers goroutines when they are many
// (the fold after a mass registration). The pieces are written one after
// another into blocks of a megabyte, not allocated one by one; chunks
// copy them out when they are sealed.
func (d *Delta) encode(todo []pending, render func(k int) eureka.InstanceInfo) [][]byte {
	pieces := make([][]byte, len(todo))
	run := func(from, to int) {
		var block []byte
		var i eureka.InstanceInfo
		for k := from; k < to; k++ {
			if cap(block)-len(block) < 16<<10 {
				block = make([]byte, 0, 1<<20)
			}
			i = render(todo[k].k)
			start := len(block)
			block = eureka.AppendEntryInstance(block, d.f, &i)
			pieces[k] = block[start:len(block):len(block)]
		}
	}
	workers := Workers()
	if len(todo) < 1024 || workers == 1 {
		run(0, len(todo))
		return pieces
	}
	var wg sync.WaitGroup
	per := (len(todo) + workers - 1) / workers
	for from := 0; from < len(todo); from += per {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(from, min(from+per, len(todo)))
		}()
	}
	wg.Wait()
	return pieces
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

// put adds or replaces the instances of changes, with their pieces.
func (d *Delta) put(changes []pending, pieces [][]byte) {
	for k, c := range changes {
		d.putOne(c.App, deltaInst{id: c.ID, version: c.Version}, pieces[k])
	}
}

// putOne adds an instance of app, with its piece, after the others: its
// latest change. An earlier change's piece of it goes.
func (d *Delta) putOne(app string, in deltaInst, piece []byte) {
	a := d.apps[app]
	if a == nil {
		a = &deltaApp{head: eureka.AppendEntryHead(nil, d.f, app), tail: eureka.AppendEntryTail(nil, d.f), where: map[string]uint64{}}
		a.headZ, a.tailZ = deflate(a.head, false), deflate(a.tail, false)
		a.headCRC, a.tailC = crc32.ChecksumIEEE(a.head), crc32.ChecksumIEEE(a.tail)
		d.apps[app] = a
		at, _ := slices.BinarySearch(d.names, app)
		d.names = slices.Insert(d.names, at, app)
	}
	a.dirty = true
	if seq, ok := a.where[in.id]; ok {
		a.remove(a.chunk(seq), in.id)
	}
	last := len(a.chunks) - 1
	if last < 0 || len(a.chunks[last].insts) >= deltacut.ChunkSize {
		a.chunks = append(a.chunks, &deltaChunk{seq: a.nextSeq})
		a.nextSeq++
		last++
	}
	ch := a.editable(last)
	ch.insts = append(ch.insts, in)
	ch.pieces = append(ch.pieces, piece)
	a.where[in.id] = ch.seq
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

// drop removes app's instance id if the change it renders is version:
// its latest change left the log.
func (d *Delta) drop(app, id string, version uint64) {
	a := d.apps[app]
	if a == nil {
		return
	}
	seq, ok := a.where[id]
	if !ok {
		return
	}
	k := a.chunk(seq)
	at := slices.IndexFunc(a.chunks[k].insts, func(x deltaInst) bool { return x.id == id })
	if a.chunks[k].insts[at].version != version {
		return
	}
	a.dirty = true
	a.remove(k, id)
	if len(a.chunks) == 0 {
		delete(d.apps, app)
		at, _ := slices.BinarySearch(d.names, app)
		d.names = slices.Delete(d.names, at, at+1)
	}
}

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
	flat := make([]byte, 0, total)
	for _, z := range e.z {
		flat = append(flat, z...)
	}
	off := len(a.headZ)
	for k, ch := range a.chunks {
		if k > 0 && seps {
			off += len(deflatedSeparator)
		}
		z := ch.deflated()
		a.chunks[k] = &deltaChunk{seq: ch.seq, insts: ch.insts, piece: ch.piece.withDeflated(flat[off : off+len(z) : off+len(z)])}
		off += len(z)
	}
	e.z = [][]byte{flat}
}
