package registry

import (
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry/document"
)

// Reads that merge remote regions into the local registry (regions=a,b)
// are rarer than local reads, so they are built whole (not from per-app
// pieces) and cached per set of regions until the registry or a region
// moves, in one form, as the full registry is kept: compressed only unless
// a client reads that format plain (wholePayload), so that a JSON and an
// XML reader hold one copy of the merged registry each, not a plain and a
// gzipped one.

// MergedPayload returns the full registry (or, with delta, the delta) in
// format f with the regions names of r merged in, cached per set of names
// and built again only when the registry or r moved; one build at a time.
// Its hash is the reconcile hash of all it holds. It counts as a full
// fetch (a delta fetch) in Totals.
func (s *Store) MergedPayload(r Remote, names []string, delta bool, f eureka.Format) *document.Payload {
	c := &s.payloads
	k := namedKey{kindRegions, strings.Join(names, ","), f}
	if delta {
		k.kind = kindRegionsDelta
		s.counters.deltaFetches.Add(1)
	} else {
		s.counters.fullFetches.Add(1)
	}
	fresh := func(p *document.Payload) bool {
		rversion, rpurges := r.Versions()
		return s.current(p, s.version.Load(), s.nowMillis()) && p.RemoteVersion() == rversion &&
			(!delta || p.Purges() == s.changes.purged.Load()+rpurges)
	}
	if p := c.namedPayload(k); fresh(p) {
		return p
	}
	c.mergedBuild.Lock()
	defer c.mergedBuild.Unlock()
	if p := c.namedPayload(k); fresh(p) {
		return p
	}
	var doc *eureka.Applications
	var version, purges uint64
	var counts eureka.StatusCounts
	now := s.nowMillis()
	s.mu.RLock()
	version = s.version.Load()
	if delta {
		purges = s.changes.purged.Load()
		doc = s.deltaLocked(c.deltaCounter.Add(1))
		counts = s.counts
	} else {
		doc = s.snapshotLocked(func(*eureka.InstanceInfo) bool { return true }, 1)
	}
	s.mu.RUnlock()
	rversion, rpurges := r.Merge(names, doc, &counts, delta)
	purges += rpurges
	if delta {
		doc.AppsHashcode = counts.Hash()
	} else {
		doc.AppsHashcode = eureka.ReconcileHash(doc.Applications)
	}
	var buf []byte
	if last := c.namedPayload(k); last != nil {
		// As large as the last build: a document of tens of megabytes
		// grown by doubling would hold twice its size while it is built.
		buf = make([]byte, 0, last.Len()+last.Len()/16)
	}
	p := s.wholePayload(k.format, version, now, eureka.AppendApplications(buf, k.format, doc))
	p.SetRemoteVersion(rversion)
	p.SetDelta(purges, 0)
	c.putNamed(k, p)
	return p
}
