package document

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry/internal/deltacut"
)

// fragment is one application's entry in the full registry, in one
// format: its parts (the entry's head and the instances of its first
// encoding, then a run of the instances registered since each later
// build, led by a separator) and the format's entry tail. It is not
// modified once made.
//
// Why runs: while a mass registration goes on every application changes
// at every build, and encoding each again whole made the first read after
// it seconds of work on every node of a cluster. A build that finds an
// application only added to since its fragment (Stale.Extend) encodes
// the new instances alone; any other change, or MaxRuns runs, encodes it
// whole again.
type fragment struct {
	version uint64 // the app's version it renders
	built   int64  // ms, when its first part was: it ages out whole
	counts  eureka.StatusCounts
	parts   []*piece
	n       int // plain bytes, the tail's included
	tail    *piece
	// z, for a fragment extended compressed (flatten), is its parts'
	// deflated pieces as one run, in which the parts hold theirs.
	z []byte
}

// MaxRuns bounds an application's runs: each is compressed apart, so
// many small ones compress worse than one.
const MaxRuns = 32

// entryTails are the formats' entry tails, kept plain and deflated.
var entryTails = func() (t [2]*piece) {
	for _, f := range []eureka.Format{eureka.FormatJSON, eureka.FormatXML} {
		t[f] = newPiece(eureka.AppendEntryTail(nil, f), false)
		t[f].deflated()
	}
	return t
}()

// kept returns fr in the form a document keeps (piece.kept).
func (fr *fragment) kept(plain bool) *fragment {
	var out *fragment
	for k, p := range fr.parts {
		if q := p.kept(plain); q != p {
			if out == nil {
				c := *fr
				c.parts = slices.Clone(fr.parts)
				out = &c
			}
			out.parts[k] = q
		}
	}
	if out == nil {
		return fr
	}
	return out
}

// plain appends fr's plain parts to dst.
func (fr *fragment) plain(dst [][]byte) [][]byte {
	for _, p := range fr.parts {
		dst = append(dst, p.plain())
	}
	return append(dst, fr.tail.body)
}

// deflated appends fr's deflate pieces to dst, and returns the CRC-32
// and length of their plain bytes.
func (fr *fragment) deflated(dst [][]byte) ([][]byte, uint32, int) {
	var crc uint32
	n := 0
	for _, p := range fr.parts {
		if fr.z == nil {
			dst = append(dst, p.deflated())
		}
		crc, n = crc32Combine(crc, p.crc, p.n), n+p.n
	}
	if fr.z != nil {
		dst = append(dst, fr.z[:len(fr.z):len(fr.z)]) // its room is the next run's
	}
	dst = append(dst, fr.tail.deflated())
	return dst, crc32Combine(crc, fr.tail.crc, fr.tail.n), n + fr.tail.n
}

// Full is the full registry of one format, kept as one fragment per
// application so that a build encodes only the applications changed
// since the last. It is not safe for concurrent use: its owner builds it
// under one lock.
type Full struct {
	f     eureka.Format
	frags map[string]*fragment
}

// NewFull returns a full registry of format f with no application
// encoded yet.
func NewFull(f eureka.Format) *Full {
	return &Full{f: f, frags: map[string]*fragment{}}
}

// Entry is what a Full holds of one application: the application's
// version it renders, when it was first encoded (ms: it ages out whole)
// and its runs.
type Entry struct {
	Version uint64
	Built   int64
	Runs    int
}

// Entry returns what x holds of app, and false if nothing.
func (x *Full) Entry(app string) (Entry, bool) {
	fr := x.frags[app]
	if fr == nil {
		return Entry{}, false
	}
	return Entry{fr.version, fr.built, len(fr.parts)}, true
}

// Apps returns how many applications x holds.
func (x *Full) Apps() int { return len(x.frags) }

// Stale is an application to encode again, with what the registry
// copied of its leases under its lock: each holder (never modified) and
// its lease's timestamps, not a copy of each instance, so that a build
// at a million instances copies tens of megabytes, not hundreds. With
// Extend, the leases are those added since the application's entry
// (Entry.Version), which they extend by one run.
type Stale struct {
	Name    string
	Version uint64
	Leases  []Lease
	Extend  bool
}

// Lease is a lease as a read renders it: its holder and timestamps, and
// the version that added it.
type Lease struct {
	ID    string
	Added uint64
	Info  *eureka.InstanceInfo
	Lease eureka.LeaseInfo
}

// Render encodes the stale applications, drops those not in names, and
// assembles the document of the applications names (sorted in place) at
// version, built at now. coordinator is the instance id of the server
// itself (isCoordinatingDiscoveryServer), "" for none; keepPlain says
// whether a document of a size is kept plain as well as compressed.
func (x *Full) Render(names []string, stale []Stale, version uint64, now int64, coordinator string, keepPlain func(int) bool) *Payload {
	f, frags := x.f, x.frags
	x.encode(stale, now, coordinator, keepPlain)
	if len(frags) > len(names) {
		live := make(map[string]bool, len(names))
		for _, n := range names {
			live[n] = true
		}
		for n := range frags {
			if !live[n] {
				delete(frags, n)
			}
		}
	}
	sort.Strings(names)
	var counts eureka.StatusCounts
	pieces := make([]*fragment, len(names))
	head := eureka.AppendApplicationsHead(nil, f, 1, "")
	tail := eureka.AppendApplicationsTail(nil, f)
	sep := eureka.ApplicationsSeparator(f)
	size := len(head) + len(tail) + 64 // the hash's room
	for n, name := range names {
		pieces[n] = frags[name]
		size += pieces[n].n + len(sep)
		for st, k := range pieces[n].counts {
			counts[st] += k
		}
	}
	head = eureka.AppendApplicationsHead(head[:0], f, 1, counts.Hash())
	plain := keepPlain(size)
	for n, fr := range pieces {
		// Kept in the form the document is kept in, so that memory holds
		// one of them.
		pieces[n] = fr.kept(plain)
		frags[names[n]] = pieces[n]
	}
	parts := 2
	for _, fr := range pieces {
		parts += len(fr.parts) + 2
	}
	doc := &assembly{head: head, tail: tail, sep: sep, entries: len(pieces), parts: parts,
		plain:    func(dst [][]byte, k int) [][]byte { return pieces[k].plain(dst) },
		deflated: func(dst [][]byte, k int) ([][]byte, uint32, int) { return pieces[k].deflated(dst) },
	}
	return doc.payload(version, now, plain)
}

// encode encodes the stale applications' pieces, on Workers goroutines
// (a first build at a million instances is seconds of encoding and
// compressing). A piece is kept compressed only when the document is
// expected to be (keepPlain of an estimate from the pieces it keeps),
// so that no build holds the whole plain document.
func (x *Full) encode(stale []Stale, now int64, coordinator string, keepPlain func(int) bool) {
	if len(stale) == 0 {
		return
	}
	isStale := make(map[string]bool, len(stale))
	staleInstances := 0
	for _, st := range stale {
		staleInstances += len(st.Leases)
		isStale[st.Name] = !st.Extend // an extended app keeps its base
	}
	kept, all, allInstances := 0, 0, 0 // bytes of the pieces kept, of all, their instances
	for name, fr := range x.frags {
		for _, n := range fr.counts {
			allInstances += n
		}
		all += fr.n
		if !isStale[name] {
			kept += fr.n
		}
	}
	per := 1400 // bytes per instance in JSON, about, before any piece says
	if x.f == eureka.FormatXML {
		per = 2000
	}
	if allInstances > 0 {
		per = all / allInstances
	}
	compress := !keepPlain(kept + staleInstances*per)
	out := make([]*fragment, len(stale))
	inParallel(len(stale), 2, func(k int, scratch *[]byte) {
		var base *fragment
		if stale[k].Extend {
			base = x.frags[stale[k].Name]
		}
		out[k] = encodeFragment(x.f, stale[k], base, now, coordinator, compress, scratch)
	})
	for k, st := range stale {
		x.frags[st.Name] = out[k]
	}
}

// encodeFragment encodes one application's entry in scratch, or the run
// of instances that extends base, and keeps it plain, or compressed only.
func encodeFragment(f eureka.Format, st Stale, base *fragment, now int64, coordinator string, compress bool, scratch *[]byte) *fragment {
	fr := &fragment{version: st.Version, built: now, tail: entryTails[f]}
	var b []byte
	if base != nil {
		// In the order they came, as the delta has them.
		slices.SortFunc(st.Leases, func(a, b Lease) int { return cmp.Compare(a.Added, b.Added) })
		fr.built, fr.counts, fr.parts = base.built, base.counts, slices.Clip(base.parts)
		b = append((*scratch)[:0], eureka.InstanceSeparator(f)...)
	} else {
		slices.SortFunc(st.Leases, func(a, b Lease) int { return strings.Compare(a.ID, b.ID) })
		b = eureka.AppendEntryHead((*scratch)[:0], f, st.Name)
	}
	sep := eureka.InstanceSeparator(f)
	var inst eureka.InstanceInfo
	for k, lv := range st.Leases {
		if k > 0 {
			b = append(b, sep...)
		}
		inst = *lv.Info
		inst.LeaseInfo = lv.Lease
		inst.IsCoordinatingDiscoveryServer = coordinator != "" && lv.ID == coordinator
		b = eureka.AppendEntryInstance(b, f, &inst)
		fr.counts.Add(inst.Status)
	}
	*scratch = b
	if !compress {
		b = slices.Clone(b)
	}
	fr.parts = append(fr.parts, newPiece(b, compress))
	fr.n = fr.tail.n
	for _, p := range fr.parts {
		fr.n += p.n
	}
	if base != nil && compress {
		fr.flatten(base)
	}
	return fr
}

// flatten makes fr's deflated pieces one run (z) when they add up to a
// part that writeParts writes as it is (deltacut.FlattenFrom), its parts
// then holding theirs in that run, so that memory holds them once. fr
// extends base by its last part: base's run, if it has one, is extended
// in its spare room when it has enough, so that the documents built
// since share its bytes and an extension copies only its own. A run
// holds up to twice its bytes until its application is encoded whole
// (MaxRuns, PayloadMaxAge).
//
// Why: after a mass registration an application's entry is its first
// encoding and a run for each build since (fifteen at a million
// instances), a few kilobytes each, which every read of the gzipped
// registry gathered into its writes, a copy before the writes' admission
// (httpapi's bulk writers): twenty first reads were twenty copies of 55
// MB at once, and heartbeats waited for the processors
// (docs/performance.md, "Heartbeats behind the first full fetches").
func (fr *fragment) flatten(base *fragment) {
	last := len(fr.parts) - 1
	add := fr.parts[last].deflated()
	if n := len(base.z); n > 0 && n+len(add) <= cap(base.z) {
		// In base's room, which base does not read: the earlier parts
		// hold theirs where they are.
		z := append(base.z, add...)
		fr.parts[last] = fr.parts[last].withDeflated(z[n:len(z):len(z)])
		fr.z = z
		return
	}
	zs := make([][]byte, len(fr.parts))
	total := 0
	for k, p := range fr.parts {
		zs[k] = p.deflated()
		total += len(zs[k])
	}
	if total < deltacut.FlattenFrom {
		return
	}
	// Twice the room it needs, so that the copies of a registration's
	// runs add up to twice the application's bytes, not their square.
	z, each := joinRuns(zs, total)
	for k, p := range fr.parts { // fr's own slice: base's is clipped
		fr.parts[k] = p.withDeflated(each[k])
	}
	fr.z = z
}
