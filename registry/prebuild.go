package registry

import (
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// Prebuild builds the full registry and the delta, and their gzip forms,
// ahead of their next reader, once the registry has gone PrebuildDelay
// without a change. Start runs it every half PrebuildDelay; it is
// exported so that a test can drive it with a fake clock.
//
// What it builds is what a fleet reads: the JSON documents (those of
// Spring Cloud's and most other clients) always, the XML ones once any
// client has read them, and the delta only where it is enabled. A
// document already built at the current version, and not about to reach
// PayloadMaxAge, is left alone, so an idle registry costs nothing; one
// that ages is built again only if it was read since it was built.
//
// Why: right after a mass registration (a cluster's cold start, a region
// coming back) every client asks for the same documents at once, and at
// a million instances the first build is seconds of encoding and
// compressing. A build holds its document's build lock, so readers that
// come meanwhile wait for it rather than start their own.
func (s *Store) Prebuild() {
	if s.cfg.PrebuildDelay < 0 {
		return
	}
	now := s.nowMillis()
	if now-s.lastChange.Load() < s.cfg.PrebuildDelay.Milliseconds() {
		return // still changing: readers build what they read
	}
	c := &s.payloads
	ahead := s.cfg.PrebuildDelay.Milliseconds()
	for _, f := range []eureka.Format{eureka.FormatJSON, eureka.FormatXML} {
		if s.prebuildWanted(&c.fullReads[f], c.full[f].Load(), f, now) {
			s.fullPayload(f, ahead).Gzip()
		}
		if !s.cfg.DisableDelta && s.prebuildWanted(&c.deltaReads[f], c.delta[f].Load(), f, now) {
			s.deltaPayload(f, ahead).Gzip()
		}
	}
}

// prebuildWanted reports whether Prebuild builds a document, p its last
// build, reads what its readers left since it.
func (s *Store) prebuildWanted(reads *prebuildReads, p *Payload, f eureka.Format, now int64) bool {
	if f != eureka.FormatJSON && !reads.ever.Load() {
		return false
	}
	if p == nil || p.version != s.version.Load() {
		reads.since.Store(false)
		return true
	}
	// Built at this version: again only before it ages out, and only if
	// someone read it since.
	return now+s.cfg.PrebuildDelay.Milliseconds() >= p.built+s.cfg.PayloadMaxAge.Milliseconds() && reads.since.Swap(false)
}

// prebuildReads is what Prebuild knows of a document's readers.
type prebuildReads struct {
	ever  atomic.Bool // read at least once
	since atomic.Bool // read since Prebuild last looked
}

// read notes a read of the document.
func (r *prebuildReads) read() {
	if !r.since.Load() {
		r.since.Store(true)
	}
	if !r.ever.Load() {
		r.ever.Store(true)
	}
}
