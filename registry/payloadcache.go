package registry

import (
	"sync"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry/document"
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

// payloadCache holds the serialized documents, which package document
// renders. Full and delta payloads are behind atomic pointers; a miss
// rebuilds under build, so concurrent readers after a change serialize
// once. The full registry is assembled from one cached piece per
// application (fulls, owned by fullBuild), so a change re-encodes only
// its application. Every encoding happens outside the Store's lock:
// under it, a build only copies what it will encode.
type payloadCache struct {
	// One build at a time per document: readers of a document being
	// built wait for that build, and take its result.
	fullBuild    [2]sync.Mutex
	full         [2]atomic.Pointer[document.Payload]
	fulls        [2]*document.Full // owned by fullBuild
	deltaBuild   [2]sync.Mutex
	delta        [2]atomic.Pointer[document.Payload]
	deltaDocs    [2]*document.Delta // owned by deltaBuild
	deltaCounter atomic.Int64
	// What prebuild knows of the documents' readers.
	fullReads, deltaReads [2]prebuildReads
	// plainReads is whether the full registry or the delta has been read
	// plain, by format (keepPlain).
	plainReads [2]atomic.Bool

	namedMu sync.Mutex
	named   map[namedKey]*document.Payload
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
	c.named = map[namedKey]*document.Payload{}
	for f := range c.fulls {
		c.fulls[f] = document.NewFull(eureka.Format(f))
		c.deltaDocs[f] = document.NewDelta(eureka.Format(f), 0)
	}
}

// Documents is the Store's cache of serialized documents, which reads
// are served from as they are: the full registry, the delta, one
// application, a VIP query, each built again only after a change that
// shows in it (or when it reaches PayloadMaxAge). Store.Documents
// returns it.
type Documents struct{ s *Store }

// Documents returns the Store's document cache.
func (s *Store) Documents() Documents { return Documents{s} }

// Builds counts how many times the full registry has been assembled, in
// either format. It moves only after a change, or when a payload reaches
// PayloadMaxAge.
func (d Documents) Builds() uint64 { return d.s.payloads.builds.Load() }

// current reports whether p was built at version or later, is younger
// than PayloadMaxAge at now, and is in the form it should be kept in: a
// document kept compressed only that a plain reader has since asked for
// is built again, plain (keepPlain).
func (s *Store) current(p *document.Payload, version uint64, now int64) bool {
	return p != nil && p.Version() >= version && now-p.Built() < s.cfg.PayloadMaxAge.Milliseconds() && !s.wantsPlain(p)
}

// wantsPlain reports whether p is kept compressed only but should now be
// kept plain too.
func (s *Store) wantsPlain(p *document.Payload) bool {
	limit := s.cfg.MaxPlainPayload
	return p.PlainWanted() && (limit < 0 || int64(p.Len()) <= limit)
}

// wholePayload keeps b, a document in format f built whole, in one form:
// plain when the Store keeps that format plain (keepPlain), else
// compressed only, its plain bytes left to the collector.
func (s *Store) wholePayload(f eureka.Format, version uint64, built int64, b []byte) *document.Payload {
	p := document.Whole(version, built, b, s.keepPlain(f, len(b)))
	p.TrackPlainReads(&s.payloads.plainReads[f])
	return p
}

// Full returns the full registry serialized in format f, assembled again
// only if the registry changed since (or the payload reached
// PayloadMaxAge). Each call counts as a full fetch in Totals, as the
// other getters count theirs.
func (d Documents) Full(f eureka.Format) *document.Payload {
	s := d.s
	s.counters.fullFetches.Add(1)
	s.payloads.fullReads[f].read(s.nowMillis())
	return s.fullPayload(f, 0)
}

// fullPayload returns the full registry in format f, built again if it
// is not current ahead ms from now (prebuild looks ahead). One build at a
// time: a caller that finds a build under way waits for it, and takes its
// result if it holds every change made before the caller came; else the
// caller builds, and whoever comes meanwhile takes that build. So a
// reader waits for two builds at most, however fast changes come.
func (s *Store) fullPayload(f eureka.Format, ahead int64) *document.Payload {
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
func (s *Store) buildFull(f eureka.Format, ahead int64) *document.Payload {
	c := &s.payloads
	p := s.assembleFull(f, ahead)
	c.full[f].Store(p)
	c.builds.Add(1)
	return p
}

// assembleFull builds the full registry from the application pieces,
// re-encoding the stale ones: those of an app changed since, or that
// reach PayloadMaxAge within ahead ms. The caller holds c.fullBuild[f].
func (s *Store) assembleFull(f eureka.Format, ahead int64) *document.Payload {
	c := &s.payloads
	full := c.fulls[f]
	s.mu.RLock()
	version, now := s.version.Load(), s.nowMillis()
	names := make([]string, 0, len(s.apps))
	var stale []document.Stale
	for name, a := range s.apps {
		if len(a.leases) == 0 {
			continue
		}
		names = append(names, name)
		e, ok := full.Entry(name)
		fresh := ok && now+ahead-e.Built < s.cfg.PayloadMaxAge.Milliseconds()
		if fresh && e.Version == a.version {
			continue
		}
		if fresh && a.rewritten <= e.Version && e.Runs < document.MaxRuns {
			// Only added to since its entry: encode the new instances alone.
			var leases []document.Lease
			for id, l := range a.leases {
				if l.added > e.Version {
					leases = append(leases, document.Lease{ID: id, Added: l.added, Info: l.info, Lease: s.leaseInfo(l)})
				}
			}
			stale = append(stale, document.Stale{Name: name, Version: a.version, Leases: leases, Extend: true})
			continue
		}
		leases := make([]document.Lease, 0, len(a.leases))
		for id, l := range a.leases {
			leases = append(leases, document.Lease{ID: id, Added: l.added, Info: l.info, Lease: s.leaseInfo(l)})
		}
		stale = append(stale, document.Stale{Name: name, Version: a.version, Leases: leases})
	}
	s.mu.RUnlock()

	p := full.Render(names, stale, version, now, s.cfg.InstanceID, func(size int) bool { return s.keepPlain(f, size) })
	c.encodes.Add(uint64(len(stale)))
	p.TrackPlainReads(&c.plainReads[f])
	return p
}

// Delta returns the delta serialized in format f. versions__delta counts
// the regenerations of the delta, as in Eureka.
func (d Documents) Delta(f eureka.Format) *document.Payload {
	s := d.s
	s.counters.deltaFetches.Add(1)
	s.payloads.deltaReads[f].read(s.nowMillis())
	return s.deltaPayload(f, 0)
}

// deltaPayload returns the delta in format f, built again if it is not
// current ahead ms from now, one build at a time as fullPayload.
func (s *Store) deltaPayload(f eureka.Format, ahead int64) *document.Payload {
	c := &s.payloads
	// Fresh is as in fullPayload: built after every change and purge
	// made before the caller came.
	asked, askedPurges := s.version.Load(), s.changes.purged.Load()
	fresh := func(p *document.Payload) bool {
		return s.current(p, asked, s.nowMillis()+ahead) && p.Purges() >= askedPurges
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
func (s *Store) buildDelta(f eureka.Format) *document.Payload {
	c := &s.payloads
	counter := c.deltaCounter.Load()
	if prev := c.delta[f].Load(); prev != nil && s.wantsPlain(prev) && prev.Version() == s.version.Load() && prev.Purges() == s.changes.purged.Load() &&
		s.nowMillis()-prev.Built() < s.cfg.PayloadMaxAge.Milliseconds() {
		counter = prev.Counter() // the same delta, to be kept plain too
	} else if other := c.delta[1-f].Load(); !s.current(other, s.version.Load(), s.nowMillis()) || other.Purges() != s.changes.purged.Load() {
		counter = c.deltaCounter.Add(1) // a new delta, not the other format of this one
	}
	d, version, purges, now, hash := s.foldDelta(f)
	keepPlain := func(size int) bool { return s.keepPlain(f, size) }
	p := d.Assemble(version, now, counter, hash, keepPlain)
	p.SetDelta(purges, counter)
	p.TrackPlainReads(&c.plainReads[f])
	c.delta[f].Store(p)
	c.deltaBuilds.Add(1)
	return p
}

// foldDelta brings the delta document of format f to the change log, and
// returns it with the version, purge count, time and hash it holds. The
// caller holds c.deltaBuild[f].
func (s *Store) foldDelta(f eureka.Format) (d *document.Delta, version, purges uint64, now int64, hash string) {
	c := &s.payloads
	d = c.deltaDocs[f]
	s.mu.RLock()
	version, purges, now, hash = s.version.Load(), s.changes.purged.Load(), s.nowMillis(), s.hashLocked()
	base := s.changes.base
	changes, ok := s.changes.after(d.UpTo(), version)
	if !ok {
		// Changes left the log before this document took them in: start
		// again from what the log holds.
		d = document.NewDelta(f, base)
		c.deltaDocs[f] = d
		changes, _ = s.changes.after(base, version)
	}
	s.mu.RUnlock()
	// Changes are immutable once recorded: encoded outside the lock.
	d.Fold(len(changes), func(k int) document.Change {
		return document.Change{Version: changes[k].Version, App: changes[k].App, ID: changes[k].ID}
	}, base, func(k int) eureka.InstanceInfo { return s.deltaInstance(&changes[k]) },
		func(size int) bool { return s.keepPlain(f, size) })
	return d, version, purges, now, hash
}

// App returns one application serialized in format f, or false if it
// has no instances. It is rebuilt only after a change to that application
// (or when it reaches PayloadMaxAge).
func (d Documents) App(app string, f eureka.Format) (*document.Payload, bool) {
	s := d.s
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
	p := document.New(version, now, eureka.AppendApplication(nil, f, doc))
	s.payloads.putNamed(key, p)
	return p, true
}

// VIP returns the VIP (or secure VIP) query result serialized in format
// f. It reads only the applications the VIP index names, and is rebuilt
// only after a change to the registry.
func (d Documents) VIP(vip string, secure bool, f eureka.Format) *document.Payload {
	s := d.s
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
	p := document.New(version, now, eureka.AppendApplications(nil, f, s.vip(vip, secure)))
	s.payloads.putNamed(key, p)
	return p
}

func (c *payloadCache) namedPayload(key namedKey) *document.Payload {
	c.namedMu.Lock()
	defer c.namedMu.Unlock()
	return c.named[key]
}

func (c *payloadCache) putNamed(key namedKey, p *document.Payload) {
	c.namedMu.Lock()
	defer c.namedMu.Unlock()
	if len(c.named) >= maxNamedPayloads {
		clear(c.named)
	}
	c.named[key] = p
}

// Sizes returns the size in bytes of the last serialized full registry
// and delta, by format ("json", "xml"); 0 for one not built yet.
func (d Documents) Sizes() (full, delta map[string]int) {
	s := d.s
	full, delta = map[string]int{}, map[string]int{}
	for f, name := range []string{"xml", "json"} {
		if p := s.payloads.full[f].Load(); p != nil {
			full[name] = p.Len()
		}
		if p := s.payloads.delta[f].Load(); p != nil {
			delta[name] = p.Len()
		}
	}
	return full, delta
}
