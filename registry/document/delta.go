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
	// todo holds the changes to fold in by their k alone, 8 bytes each,
	// not a copy of each Change: a fold after a mass registration takes a
	// million of them. change(k) is asked again where a field is needed.
	var todo []int
	for k := range count {
		if change(k).Version > d.upTo {
			todo = append(todo, k)
		}
	}
	if len(todo) == 0 {
		return
	}
	d.upTo = change(todo[len(todo)-1]).Version
	if len(todo) > 1 {
		// Only each instance's latest change is shown: the others are not
		// encoded.
		type key struct{ app, id string }
		latest := make(map[key]int, len(todo))
		for _, k := range todo {
			c := change(k)
			latest[key{c.App, c.ID}] = k
		}
		kept := todo[:0]
		for _, k := range todo {
			if c := change(k); latest[key{c.App, c.ID}] == k {
				kept = append(kept, k)
			}
		}
		todo = kept
	}
	for _, k := range todo {
		c := change(k)
		d.folded = append(d.folded, foldedChange{c.Version, c.App, c.ID})
	}
	if len(todo) <= deltacut.FoldBatch {
		d.put(todo, change, d.encode(todo, render))
		return
	}
	// Many changes (the first delta after a mass registration: a
	// gigabyte of instances): app by app, each app's in order, a batch
	// at a time, each batch's chunks sealed before the next is encoded,
	// so that the fold holds one batch plain, not the whole retention
	// window, and seals an application's last chunk once, not once a
	// batch.
	slices.SortFunc(todo, func(a, b int) int {
		ca, cb := change(a), change(b)
		return byAppInOrder(ca.App, ca.Version, cb.App, cb.Version)
	})
	encoded := 0
	for from := 0; from < len(todo); from += deltacut.FoldBatch {
		batch := todo[from:min(from+deltacut.FoldBatch, len(todo))]
		pieces := d.encode(batch, render)
		for _, p := range pieces {
			encoded += len(p)
		}
		d.put(batch, change, pieces)
		// Sealed in the form the document is likely to be kept in: its
		// last size and what the fold adds, at the rate so far.
		compress := !keepPlain(d.size + encoded*len(todo)/(from+len(batch)))
		d.seal(len(batch), func(k int) string { return change(batch[k]).App }, compress)
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

// encode renders the pieces of the changes todo (their k), on Workers
// goroutines when they are many (the fold after a mass registration).
// The pieces are written one after
// another into blocks of a megabyte, not allocated one by one; chunks
// copy them out when they are sealed.
func (d *Delta) encode(todo []int, render func(k int) eureka.InstanceInfo) [][]byte {
	pieces := make([][]byte, len(todo))
	run := func(from, to int) {
		var block []byte
		var i eureka.InstanceInfo
		for k := from; k < to; k++ {
			if cap(block)-len(block) < 16<<10 {
				block = make([]byte, 0, 1<<20)
			}
			i = render(todo[k])
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

// put adds or replaces the instances of the changes ks (of change), with
// their pieces.
func (d *Delta) put(ks []int, change func(k int) Change, pieces [][]byte) {
	for n, k := range ks {
		c := change(k)
		d.putOne(c.App, deltaInst{id: c.ID, version: c.Version}, pieces[n])
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
