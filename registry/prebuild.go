package registry

import (
	"sync/atomic"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry/document"
)

// prebuild builds the full registry and the delta, and their gzip forms,
// ahead of their next reader, once the registry has gone PrebuildDelay
// without a change. Start runs it every half PrebuildDelay; a test
// drives it with a fake clock.
//
// What it builds is what a fleet reads: the JSON documents (those of
// Spring Cloud's and most other clients) always, the XML ones while a
// client has read them in the last xmlInterest (a fleet reads every 30
// s; a health check's one read of /eureka/apps, XML when it names no
// format, must not cost a build of the XML registry at every quiet
// second for good), and the delta only where it is enabled. A
// document already built at the current version, and not about to reach
// PayloadMaxAge, is left alone, so an idle registry costs nothing; one
// that ages is built again only if it was read since it was built.
//
// Why: right after a mass registration (a cluster's cold start, a region
// coming back) every client asks for the same documents at once, and at
// a million instances the first build is seconds of encoding and
// compressing. A build holds its document's build lock, so readers that
// come meanwhile wait for it rather than start their own.
//
// While the registry is still changing, it folds the changes waiting for
// the delta into its document once they are many (foldAheadFrom,
// 65,536), and builds the full registry as often, which then encodes
// only the instances added since (fragment): the delta of a mass
// registration holds every instance registered, and either built only
// once the registrations stop would keep the first readers waiting for
// seconds, on every node of a cluster at once. The delta is
// built before the full registry, since what is left of it is then the
// smaller build.
func (s *Store) prebuild() {
	if s.cfg.PrebuildDelay < 0 {
		return
	}
	c := &s.payloads
	formats := []eureka.Format{eureka.FormatJSON, eureka.FormatXML}
	now := s.nowMillis()
	if now-s.lastChange.Load() < s.cfg.PrebuildDelay.Milliseconds() {
		// Still changing: readers build what they read.
		for _, f := range formats {
			if !s.cfg.DisableDelta && c.deltaReads[f].wanted(f, now) {
				s.foldAhead(f)
			}
			if c.fullReads[f].wanted(f, now) {
				s.fullAhead(f)
			}
		}
		return
	}
	ahead := s.cfg.PrebuildDelay.Milliseconds()
	for _, f := range formats {
		if !s.cfg.DisableDelta && s.prebuildWanted(&c.deltaReads[f], c.delta[f].Load(), f, now) {
			s.deltaPayload(f, ahead).Gzip()
		}
		if s.prebuildWanted(&c.fullReads[f], c.full[f].Load(), f, now) {
			s.fullPayload(f, ahead).Gzip()
		}
	}
}

// foldAheadFrom is how many changes may wait for the delta while the
// registry keeps changing before prebuild folds them into its document (a
// variable for the tests). Each fold re-seals the last chunk of every
// application it touches, so it is not done for a few changes.
var foldAheadFrom = uint64(1 << 16)

// foldAhead folds the changes waiting for the delta in format f into its
// document, without assembling it, when they are foldAheadFrom or more
// and no build is under way: the next build folds only what came since.
func (s *Store) foldAhead(f eureka.Format) {
	c := &s.payloads
	if !c.deltaBuild[f].TryLock() {
		return
	}
	defer c.deltaBuild[f].Unlock()
	if s.version.Load()-c.deltaDocs[f].UpTo() < foldAheadFrom {
		return
	}
	s.foldDelta(f)
	c.deltaFolds.Add(1)
}

// fullAhead builds the full registry in format f, when foldAheadFrom
// changes or more came since its last build and no build is under way:
// while a mass registration goes on, each application's piece is then
// extended by the instances added since (fragment), so that what is left
// for the first build after it is the last of it.
func (s *Store) fullAhead(f eureka.Format) {
	c := &s.payloads
	if !c.fullBuild[f].TryLock() {
		return
	}
	defer c.fullBuild[f].Unlock()
	var built uint64
	if p := c.full[f].Load(); p != nil {
		built = p.Version()
	}
	if s.version.Load()-built < foldAheadFrom {
		return
	}
	s.buildFull(f, 0)
}

// prebuildWanted reports whether prebuild builds a document, p its last
// build, reads what its readers left since it.
func (s *Store) prebuildWanted(reads *prebuildReads, p *document.Payload, f eureka.Format, now int64) bool {
	if !reads.wanted(f, now) {
		return false
	}
	if p == nil || p.Version() != s.version.Load() {
		reads.since.Store(false)
		return true
	}
	// Built at this version: again only before it ages out, and only if
	// someone read it since.
	return now+s.cfg.PrebuildDelay.Milliseconds() >= p.Built()+s.cfg.PayloadMaxAge.Milliseconds() && reads.since.Swap(false)
}

// prebuildReads is what prebuild knows of a document's readers.
type prebuildReads struct {
	last  atomic.Int64 // when it was last read, ms
	since atomic.Bool  // read since prebuild last looked
}

// xmlInterest is how long after an XML document's last read prebuild
// still builds it.
const xmlInterest = 5 * time.Minute

// read notes a read of the document at now (ms).
func (r *prebuildReads) read(now int64) {
	if !r.since.Load() {
		r.since.Store(true)
	}
	if r.last.Load() != now {
		r.last.Store(now)
	}
}

// wanted reports whether prebuild builds the document of format f at
// now: JSON always, XML while it was read in the last xmlInterest.
func (r *prebuildReads) wanted(f eureka.Format, now int64) bool {
	last := r.last.Load()
	return f == eureka.FormatJSON || last != 0 && now-last < xmlInterest.Milliseconds()
}
