package registry

import (
	"hash/crc32"
	"slices"
	"strings"
	"sync"

	"github.com/eurekagate/eurekagate/eureka"
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
// ChangesDocument has them), applications sorted by name and instances
// by id, as the full registry is: deltaLocked writes the same document
// whole, which the tests compare it with, byte for byte.

// deltaChunkSize is how many instances a chunk holds at most: a change
// re-copies and re-compresses its chunk, not its application.
const deltaChunkSize = 64

// deltaDoc is the delta of one format, owned by its build lock.
type deltaDoc struct {
	f     eureka.Format
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
	chunks         []*deltaChunk // sorted by id, none empty
}

// deltaChunk is a run of an application's instances, sorted by id. A
// chunk with a body is sealed: payloads hold it, so a change makes a new
// chunk in its place.
type deltaChunk struct {
	insts []deltaInst
	body  []byte // the pieces with their separators; nil until sealed
	crc   uint32

	gzOnce sync.Once
	gz     []byte
}

type deltaInst struct {
	id      string
	version uint64 // of the change it renders
	piece   []byte
}

func (ch *deltaChunk) deflated() []byte {
	ch.gzOnce.Do(func() { ch.gz = deflate(ch.body, false) })
	return ch.gz
}

// seal makes the chunk's body.
func (ch *deltaChunk) seal(sep []byte) {
	n := 0
	for _, in := range ch.insts {
		n += len(in.piece) + len(sep)
	}
	b := make([]byte, 0, n)
	for k, in := range ch.insts {
		if k > 0 {
			b = append(b, sep...)
		}
		b = append(b, in.piece...)
	}
	ch.body, ch.crc = b, crc32.ChecksumIEEE(b)
}

func newDeltaDoc(f eureka.Format) *deltaDoc {
	return &deltaDoc{f: f, apps: map[string]*deltaApp{}}
}

// fold brings the document to the changes of the retained log: it drops
// the instances whose latest change the log no longer holds (base moved)
// and adds or replaces the instances of changes (those after upTo).
// render decorates a change's instance as the delta shows it.
func (d *deltaDoc) fold(changes []Change, base uint64, render func(*Change) eureka.InstanceInfo) {
	if base > d.base {
		n := 0
		for n < len(d.folded) && d.folded[n].version <= base {
			fc := d.folded[n]
			d.drop(fc.app, fc.id, fc.version)
			n++
		}
		d.folded = append(d.folded[:0:0], d.folded[n:]...)
		d.base = base
	}
	for n := range changes {
		c := &changes[n]
		if c.Version <= d.upTo {
			continue
		}
		i := render(c)
		d.put(c.App, deltaInst{id: c.ID, version: c.Version, piece: eureka.AppendEntryInstance(nil, d.f, &i)})
		d.folded = append(d.folded, foldedChange{c.Version, c.App, c.ID})
		d.upTo = c.Version
	}
}

// find returns the chunk of a that holds id or would: the last whose
// first id is at most id (the first chunk for an id before all).
func (a *deltaApp) find(id string) int {
	k, _ := slices.BinarySearchFunc(a.chunks, id, func(ch *deltaChunk, id string) int {
		return strings.Compare(ch.insts[0].id, id)
	})
	if k == len(a.chunks) || a.chunks[k].insts[0].id != id {
		k--
	}
	return max(k, 0)
}

// editable returns chunk k of a as a chunk the builder may change: itself
// if not sealed yet, else an unsealed copy in its place.
func (a *deltaApp) editable(k int) *deltaChunk {
	ch := a.chunks[k]
	if ch.body == nil {
		return ch
	}
	ch = &deltaChunk{insts: slices.Clone(ch.insts)}
	a.chunks[k] = ch
	return ch
}

// put adds or replaces an instance of app.
func (d *deltaDoc) put(app string, in deltaInst) {
	a := d.apps[app]
	if a == nil {
		a = &deltaApp{head: eureka.AppendEntryHead(nil, d.f, app), tail: eureka.AppendEntryTail(nil, d.f)}
		a.headZ, a.tailZ = deflate(a.head, false), deflate(a.tail, false)
		a.headCRC, a.tailC = crc32.ChecksumIEEE(a.head), crc32.ChecksumIEEE(a.tail)
		d.apps[app] = a
		at, _ := slices.BinarySearch(d.names, app)
		d.names = slices.Insert(d.names, at, app)
	}
	if len(a.chunks) == 0 {
		a.chunks = []*deltaChunk{{insts: []deltaInst{in}}}
		return
	}
	k := a.find(in.id)
	ch := a.editable(k)
	at, found := slices.BinarySearchFunc(ch.insts, in.id, func(x deltaInst, id string) int { return strings.Compare(x.id, id) })
	if found {
		ch.insts[at] = in
		return
	}
	ch.insts = slices.Insert(ch.insts, at, in)
	if len(ch.insts) > deltaChunkSize {
		half := len(ch.insts) / 2
		next := &deltaChunk{insts: slices.Clone(ch.insts[half:])}
		ch.insts = slices.Clip(ch.insts[:half])
		a.chunks = slices.Insert(a.chunks, k+1, next)
	}
}

// drop removes app's instance id if the change it renders is version:
// its latest change left the log.
func (d *deltaDoc) drop(app, id string, version uint64) {
	a := d.apps[app]
	if a == nil || len(a.chunks) == 0 {
		return
	}
	k := a.find(id)
	at, found := slices.BinarySearchFunc(a.chunks[k].insts, id, func(x deltaInst, id string) int { return strings.Compare(x.id, id) })
	if !found || a.chunks[k].insts[at].version != version {
		return
	}
	ch := a.editable(k)
	ch.insts = slices.Delete(ch.insts, at, at+1)
	if len(ch.insts) > 0 {
		return
	}
	a.chunks = slices.Delete(a.chunks, k, k+1)
	if len(a.chunks) == 0 {
		delete(d.apps, app)
		at, _ := slices.BinarySearch(d.names, app)
		d.names = slices.Delete(d.names, at, at+1)
	}
}

// assemble returns the document at version with versions__delta counter
// and hash, sealing the chunks that changed. Its gzip form is made from
// the chunks' own compressed forms.
func (d *deltaDoc) assemble(version uint64, built, counter int64, hash string) *Payload {
	f := d.f
	sep := eureka.ApplicationsSeparator(f)
	head := eureka.AppendApplicationsHead(nil, f, counter, hash)
	tail := eureka.AppendApplicationsTail(nil, f)
	type entry struct {
		a      *deltaApp
		chunks []*deltaChunk
	}
	entries := make([]entry, 0, len(d.names))
	nparts := 2
	for _, name := range d.names {
		a := d.apps[name]
		for _, ch := range a.chunks {
			if ch.body == nil {
				ch.seal(sep)
			}
		}
		entries = append(entries, entry{a, slices.Clip(a.chunks)})
		nparts += 3 + 2*len(a.chunks)
	}
	parts := make([][]byte, 0, nparts)
	parts = append(parts, head)
	for n, e := range entries {
		if n > 0 && len(sep) > 0 {
			parts = append(parts, sep)
		}
		parts = append(parts, e.a.head)
		for k, ch := range e.chunks {
			if k > 0 && len(sep) > 0 {
				parts = append(parts, sep)
			}
			parts = append(parts, ch.body)
		}
		parts = append(parts, e.a.tail)
	}
	parts = append(parts, tail)
	p := newPayload(version, built, parts...)
	p.gzip = func() [][]byte {
		z := make([][]byte, 0, len(parts)+2)
		z = append(z, deflate(head, false))
		crc := crc32.ChecksumIEEE(head)
		sepCRC := crc32.ChecksumIEEE(sep)
		addSep := func() {
			if len(sep) > 0 {
				z = append(z, deflatedSeparator)
				crc = crc32Combine(crc, sepCRC, len(sep))
			}
		}
		for n, e := range entries {
			if n > 0 {
				addSep()
			}
			z = append(z, e.a.headZ)
			crc = crc32Combine(crc, e.a.headCRC, len(e.a.head))
			for k, ch := range e.chunks {
				if k > 0 {
					addSep()
				}
				z = append(z, ch.deflated())
				crc = crc32Combine(crc, ch.crc, len(ch.body))
			}
			z = append(z, e.a.tailZ)
			crc = crc32Combine(crc, e.a.tailC, len(e.a.tail))
		}
		z = append(z, deflate(tail, false), finalBlock)
		crc = crc32Combine(crc, crc32.ChecksumIEEE(tail), len(tail))
		return gzipMember(crc, p.Len(), z...)
	}
	return p
}
