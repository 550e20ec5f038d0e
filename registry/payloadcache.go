package registry

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// maxNamedPayloads bounds the per-app and per-VIP caches, whose keys come
// from requests.
const maxNamedPayloads = 4096

type payloadKind uint8

const (
	kindApp payloadKind = iota
	kindVIP
	kindSVIP
	kindRegions      // the full registry with remote regions, by their names
	kindRegionsDelta // the delta with remote regions
)

type namedKey struct {
	kind   payloadKind
	name   string
	format eureka.Format
}

// payloadCache holds the serialized documents. Full and delta payloads are
// behind atomic pointers; a miss rebuilds under build, so concurrent
// readers after a change serialize once. The full registry is assembled
// from one cached piece per application (frags, owned by build), so a
// change re-encodes only its application. Every encoding happens outside
// the Store's lock: under it, a build only copies what it will encode.
type payloadCache struct {
	// One build at a time per document: readers of a document being
	// built wait for that build, and take its result.
	fullBuild    [2]sync.Mutex
	full         [2]atomic.Pointer[Payload]
	frags        [2]map[string]*fragment
	deltaBuild   [2]sync.Mutex
	delta        [2]atomic.Pointer[Payload]
	deltaDocs    [2]*deltaDoc // owned by deltaBuild
	deltaCounter atomic.Int64
	// What Prebuild knows of the documents' readers.
	fullReads, deltaReads [2]prebuildReads
	// plainReads is whether the full registry or the delta has been read
	// plain, by format (keepPlain).
	plainReads [2]atomic.Bool

	namedMu sync.Mutex
	named   map[namedKey]*Payload
	// mergedBuild is held by the build of a read merged with remote
	// regions (kept in named, MergedPayload): one at a time; readers of a
	// fresh one do not wait.
	mergedBuild sync.Mutex

	builds      atomic.Uint64 // assemblies of the full registry
	encodes     atomic.Uint64 // application pieces encoded
	deltaBuilds atomic.Uint64 // assemblies of the delta
	deltaFolds  atomic.Uint64 // folds ahead of the delta's readers (foldAhead)
}

// keepPlain reports whether the full registry or the delta in format f,
// of size bytes, is kept plain as well as compressed: only once a client
// has read either plain in that format, and only up to MaxPlainPayload
// (negative: always). Most clients read gzip (Spring's, hudl/fargo
// through net/http, ours), so a fleet of them never has the plain form
// in memory: at 50,000 instances, 90 MB of JSON kept for no one. The
// first plain reader inflates the compressed form as it reads; the
// documents are then built plain again (current).
func (s *Store) keepPlain(f eureka.Format, size int) bool {
	limit := s.cfg.MaxPlainPayload
	return limit < 0 || int64(size) <= limit && s.payloads.plainReads[f].Load()
}

func (c *payloadCache) init() {
	c.named = map[namedKey]*Payload{}
	c.frags = [2]map[string]*fragment{{}, {}}
	c.deltaDocs = [2]*deltaDoc{newDeltaDoc(eureka.FormatXML), newDeltaDoc(eureka.FormatJSON)}
}

// FullPayloadBuilds counts how many times the full registry has been
// assembled, in either format. It moves only after a change, or when a
// payload reaches PayloadMaxAge.
func (s *Store) FullPayloadBuilds() uint64 { return s.payloads.builds.Load() }

// current reports whether p was built at version or later, is younger
// than PayloadMaxAge at now, and is in the form it should be kept in: a
// document kept compressed only that a plain reader has since asked for
// is built again, plain (keepPlain).
func (s *Store) current(p *Payload, version uint64, now int64) bool {
	return p != nil && p.version >= version && now-p.built < s.cfg.PayloadMaxAge.Milliseconds() && !s.wantsPlain(p)
}

// wantsPlain reports whether p is kept compressed only but should now be
// kept plain too.
func (s *Store) wantsPlain(p *Payload) bool {
	limit := s.cfg.MaxPlainPayload
	return p.z != nil && p.plainRead != nil && p.plainRead.Load() && (limit < 0 || int64(p.size) <= limit)
}

// FullPayload returns the full registry serialized in format f, assembled
// again only if the registry changed since (or the payload reached
// PayloadMaxAge). Each call counts as a full fetch in Totals, as the other
// payload getters count theirs.
func (s *Store) FullPayload(f eureka.Format) *Payload {
	s.counters.fullFetches.Add(1)
	s.payloads.fullReads[f].read(s.nowMillis())
	return s.fullPayload(f, 0)
}

// fullPayload returns the full registry in format f, built again if it
// is not current ahead ms from now (Prebuild looks ahead). One build at a
// time: a caller that finds a build under way waits for it, and takes its
// result if it holds every change made before the caller came; else the
// caller builds, and whoever comes meanwhile takes that build. So a
// reader waits for two builds at most, however fast changes come.
func (s *Store) fullPayload(f eureka.Format, ahead int64) *Payload {
	c := &s.payloads
	asked := s.version.Load()
	if p := c.full[f].Load(); s.current(p, asked, s.nowMillis()+ahead) {
		return p
	}
	c.fullBuild[f].Lock()
	defer c.fullBuild[f].Unlock()
	if p := c.full[f].Load(); s.current(p, asked, s.nowMillis()+ahead) {
		return p
	}
	return s.buildFull(f, ahead)
}

// buildFull builds the full registry in format f and keeps it. The caller
// holds c.fullBuild[f].
func (s *Store) buildFull(f eureka.Format, ahead int64) *Payload {
	c := &s.payloads
	p := s.assembleFull(f, ahead)
	c.full[f].Store(p)
	c.builds.Add(1)
	return p
}

// assembleFull builds the full registry from the application pieces,
// re-encoding the stale ones: those of an app changed since, or that
// reach PayloadMaxAge within ahead ms. The caller holds c.fullBuild[f].
func (s *Store) assembleFull(f eureka.Format, ahead int64) *Payload {
	c := &s.payloads
	frags := c.frags[f]
	s.mu.RLock()
	version, now := s.version.Load(), s.nowMillis()
	names := make([]string, 0, len(s.apps))
	var stale []staleApp
	for name, a := range s.apps {
		if len(a.leases) == 0 {
			continue
		}
		names = append(names, name)
		fr := frags[name]
		fresh := fr != nil && now+ahead-fr.built < s.cfg.PayloadMaxAge.Milliseconds()
		if fresh && fr.version == a.version {
			continue
		}
		if fresh && a.rewritten <= fr.version && len(fr.parts) < maxFragmentParts {
			// Only added to since fr: encode the new instances alone.
			var views []leaseView
			for id, l := range a.leases {
				if l.added > fr.version {
					views = append(views, leaseView{id, l.added, l.info, s.leaseInfo(l)})
				}
			}
			stale = append(stale, staleApp{name, a.version, views, fr})
			continue
		}
		views := make([]leaseView, 0, len(a.leases))
		for id, l := range a.leases {
			views = append(views, leaseView{id, l.added, l.info, s.leaseInfo(l)})
		}
		stale = append(stale, staleApp{name, a.version, views, nil})
	}
	s.mu.RUnlock()

	s.encodeFragments(f, frags, stale, now)
	c.encodes.Add(uint64(len(stale)))
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
	plain := s.keepPlain(f, size)
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
	doc := &document{head: head, tail: tail, sep: sep, entries: len(pieces), parts: parts,
		plain:    func(dst [][]byte, k int) [][]byte { return pieces[k].plain(dst) },
		deflated: func(dst [][]byte, k int) ([][]byte, uint32, int) { return pieces[k].deflated(dst) },
	}
	p := doc.payload(version, now, plain)
	p.plainRead = &s.payloads.plainReads[f]
	return p
}

// encodeFragments encodes the stale applications' pieces into frags, on
// buildWorkers goroutines (a first build at a million
// instances is seconds of encoding and compressing). A piece is kept
// compressed only when the document is expected to be (keepPlain of an
// estimate from the pieces it keeps), so that no build holds the whole
// plain document.
func (s *Store) encodeFragments(f eureka.Format, frags map[string]*fragment, stale []staleApp, now int64) {
	if len(stale) == 0 {
		return
	}
	isStale := make(map[string]bool, len(stale))
	staleInstances := 0
	for _, st := range stale {
		staleInstances += len(st.leases)
		isStale[st.name] = st.base == nil // an extended app keeps its base
	}
	kept, all, allInstances := 0, 0, 0 // bytes of the pieces kept, of all, their instances
	for name, fr := range frags {
		for _, n := range fr.counts {
			allInstances += n
		}
		all += fr.n
		if !isStale[name] {
			kept += fr.n
		}
	}
	per := 1400 // bytes per instance in JSON, about, before any piece says
	if f == eureka.FormatXML {
		per = 2000
	}
	if allInstances > 0 {
		per = all / allInstances
	}
	compress := !s.keepPlain(f, kept+staleInstances*per)
	out := make([]*fragment, len(stale))
	inParallel(len(stale), 2, func(k int, scratch *[]byte) {
		out[k] = s.encodeFragment(f, stale[k], now, compress, scratch)
	})
	for k, st := range stale {
		frags[st.name] = out[k]
	}
}

// DeltaPayload returns the delta serialized in format f. versions__delta
// counts the regenerations of the delta, as in Eureka.
func (s *Store) DeltaPayload(f eureka.Format) *Payload {
	s.counters.deltaFetches.Add(1)
	s.payloads.deltaReads[f].read(s.nowMillis())
	return s.deltaPayload(f, 0)
}

// deltaPayload returns the delta in format f, built again if it is not
// current ahead ms from now, one build at a time as fullPayload.
func (s *Store) deltaPayload(f eureka.Format, ahead int64) *Payload {
	c := &s.payloads
	// Fresh is as in fullPayload: built after every change and purge
	// made before the caller came.
	asked, askedPurges := s.version.Load(), s.changes.purged.Load()
	fresh := func(p *Payload) bool {
		return s.current(p, asked, s.nowMillis()+ahead) && p.purges >= askedPurges
	}
	if p := c.delta[f].Load(); fresh(p) {
		return p
	}
	c.deltaBuild[f].Lock()
	defer c.deltaBuild[f].Unlock()
	if p := c.delta[f].Load(); fresh(p) {
		return p
	}
	return s.buildDelta(f)
}

// buildDelta builds the delta in format f and keeps it. The caller holds
// c.deltaBuild[f].
func (s *Store) buildDelta(f eureka.Format) *Payload {
	c := &s.payloads
	counter := c.deltaCounter.Load()
	if prev := c.delta[f].Load(); prev != nil && s.wantsPlain(prev) && prev.version == s.version.Load() && prev.purges == s.changes.purged.Load() &&
		s.nowMillis()-prev.built < s.cfg.PayloadMaxAge.Milliseconds() {
		counter = prev.counter // the same delta, to be kept plain too
	} else if other := c.delta[1-f].Load(); !s.current(other, s.version.Load(), s.nowMillis()) || other.purges != s.changes.purged.Load() {
		counter = c.deltaCounter.Add(1) // a new delta, not the other format of this one
	}
	d, version, purges, now, hash := s.foldDelta(f)
	keepPlain := func(size int) bool { return s.keepPlain(f, size) }
	p := d.assemble(version, now, counter, hash, keepPlain)
	p.purges, p.counter, p.plainRead = purges, counter, &c.plainReads[f]
	c.delta[f].Store(p)
	c.deltaBuilds.Add(1)
	return p
}

// foldDelta brings the delta document of format f to the change log, and
// returns it with the version, purge count, time and hash it holds. The
// caller holds c.deltaBuild[f].
func (s *Store) foldDelta(f eureka.Format) (d *deltaDoc, version, purges uint64, now int64, hash string) {
	c := &s.payloads
	d = c.deltaDocs[f]
	s.mu.RLock()
	version, purges, now, hash = s.version.Load(), s.changes.purged.Load(), s.nowMillis(), s.hashLocked()
	base := s.changes.base
	changes, ok := s.changes.after(d.upTo, version)
	if !ok {
		// Changes left the log before this document took them in: start
		// again from what the log holds.
		d = newDeltaDoc(f)
		d.upTo, d.base = base, base
		c.deltaDocs[f] = d
		changes, _ = s.changes.after(base, version)
	}
	s.mu.RUnlock()
	// Changes are immutable once recorded: encoded outside the lock.
	d.fold(changes, base, s.deltaInstance, func(size int) bool { return s.keepPlain(f, size) })
	return d, version, purges, now, hash
}

// AppPayload returns one application serialized in format f, or false if it
// has no instances. It is rebuilt only after a change to that application
// (or when it reaches PayloadMaxAge).
func (s *Store) AppPayload(app string, f eureka.Format) (*Payload, bool) {
	s.counters.appFetches.Add(1)
	key := namedKey{kindApp, app, f}
	s.mu.RLock()
	a := s.apps[app]
	if a == nil || len(a.leases) == 0 {
		s.mu.RUnlock()
		return nil, false
	}
	now := s.nowMillis()
	if p := s.payloads.namedPayload(key); s.current(p, a.version, now) {
		s.mu.RUnlock()
		return p, true
	}
	version := a.version
	doc := s.appSnapshotLocked(app, a, func(*eureka.InstanceInfo) bool { return true })
	s.mu.RUnlock()
	p := newPayload(version, now, eureka.AppendApplication(nil, f, doc))
	s.payloads.putNamed(key, p)
	return p, true
}

// VIPPayload returns the VIP (or secure VIP) query result serialized in
// format f. It reads only the applications the VIP index names, and is
// rebuilt only after a change to the registry.
func (s *Store) VIPPayload(vip string, secure bool, f eureka.Format) *Payload {
	s.counters.vipFetches.Add(1)
	kind := kindVIP
	if secure {
		kind = kindSVIP
	}
	key := namedKey{kind, vip, f}
	// The delivered version, read before the index that delivery keeps: the
	// payload is labelled no newer than what the index reflects.
	version, now := s.stream.delivered.Load(), s.nowMillis()
	if p := s.payloads.namedPayload(key); s.current(p, version, now) {
		return p
	}
	p := newPayload(version, now, eureka.AppendApplications(nil, f, s.VIP(vip, secure)))
	s.payloads.putNamed(key, p)
	return p
}

func (c *payloadCache) namedPayload(key namedKey) *Payload {
	c.namedMu.Lock()
	defer c.namedMu.Unlock()
	return c.named[key]
}

func (c *payloadCache) putNamed(key namedKey, p *Payload) {
	c.namedMu.Lock()
	defer c.namedMu.Unlock()
	if len(c.named) >= maxNamedPayloads {
		clear(c.named)
	}
	c.named[key] = p
}

// sizedLike returns an empty buffer with room for a payload a little larger
// than prev, so a rebuild does not grow its buffer step by step.
func sizedLike(prev *Payload) []byte {
	if prev == nil {
		return nil
	}
	return make([]byte, 0, prev.Len()+prev.Len()/8+512)
}
