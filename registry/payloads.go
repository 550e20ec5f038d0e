package registry

import (
	"bytes"
	"compress/gzip"
	"sync"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// Payload is a serialized document, kept until the registry changes. Its
// gzip form is made on first use.
type Payload struct {
	Body []byte

	version  uint64
	purges   uint64 // for deltas: the change log's purge count
	gzipOnce sync.Once
	gz       []byte
}

// Gzip returns Body gzip-compressed, compressing it once.
func (p *Payload) Gzip() []byte {
	p.gzipOnce.Do(func() {
		var buf bytes.Buffer
		buf.Grow(len(p.Body) / 4)
		w, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
		w.Write(p.Body)
		w.Close()
		p.gz = buf.Bytes()
	})
	return p.gz
}

// maxNamedPayloads bounds the per-app and per-VIP caches, whose keys come
// from requests.
const maxNamedPayloads = 4096

type payloadKind uint8

const (
	kindApp payloadKind = iota
	kindVIP
	kindSVIP
)

type namedKey struct {
	kind   payloadKind
	name   string
	format eureka.Format
}

// payloadCache holds the serialized documents. Full and delta payloads are
// behind atomic pointers; a miss rebuilds under build so that concurrent
// readers after a change serialize the registry once.
type payloadCache struct {
	build        sync.Mutex
	full         [2]atomic.Pointer[Payload]
	delta        [2]atomic.Pointer[Payload]
	deltaCounter atomic.Int64

	namedMu sync.Mutex
	named   map[namedKey]*Payload

	builds atomic.Uint64 // serializations of the full registry
}

// FullPayloadBuilds counts how many times the full registry has been
// serialized, in either format. It moves only after a change.
func (s *Store) FullPayloadBuilds() uint64 { return s.payloads.builds.Load() }

func (c *payloadCache) init() { c.named = map[namedKey]*Payload{} }

// FullPayload returns the full registry serialized in format f, rebuilding
// it only if the registry changed since it was last built. Each call counts
// as a full fetch in Totals, as the payload getters below count theirs.
func (s *Store) FullPayload(f eureka.Format) *Payload {
	s.counters.fullFetches.Add(1)
	c := &s.payloads
	if p := c.full[f].Load(); p != nil && p.version == s.version.Load() {
		return p
	}
	c.build.Lock()
	defer c.build.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	v := s.version.Load()
	if p := c.full[f].Load(); p != nil && p.version == v {
		return p
	}
	apps := s.snapshotLocked(func(*eureka.InstanceInfo) bool { return true }, 1)
	p := &Payload{version: v, Body: eureka.AppendApplications(sizedLike(c.full[f].Load()), f, apps)}
	c.full[f].Store(p)
	c.builds.Add(1)
	return p
}

// DeltaPayload returns the delta serialized in format f. versions__delta
// counts the regenerations of the delta, as in Eureka.
func (s *Store) DeltaPayload(f eureka.Format) *Payload {
	s.counters.deltaFetches.Add(1)
	c := &s.payloads
	fresh := func(p *Payload) bool {
		return p != nil && p.version == s.version.Load() && p.purges == s.changes.purged.Load()
	}
	if p := c.delta[f].Load(); fresh(p) {
		return p
	}
	c.build.Lock()
	defer c.build.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if p := c.delta[f].Load(); fresh(p) {
		return p
	}
	counter := c.deltaCounter.Load()
	if !fresh(c.delta[1-f].Load()) {
		counter = c.deltaCounter.Add(1) // a new delta, not the other format of this one
	}
	p := &Payload{version: s.version.Load(), purges: s.changes.purged.Load(),
		Body: eureka.AppendApplications(sizedLike(c.delta[f].Load()), f, s.deltaLocked(counter))}
	c.delta[f].Store(p)
	return p
}

// AppPayload returns one application serialized in format f, or false if it
// has no instances. It is rebuilt only after a change to that application.
func (s *Store) AppPayload(app string, f eureka.Format) (*Payload, bool) {
	s.counters.appFetches.Add(1)
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.apps[app]
	if a == nil || len(a.leases) == 0 {
		return nil, false
	}
	return s.namedPayloadLocked(namedKey{kindApp, app, f}, a.version, func() []byte {
		return eureka.AppendApplication(nil, f, s.appSnapshotLocked(app, a, func(*eureka.InstanceInfo) bool { return true }))
	}), true
}

// VIPPayload returns the VIP (or secure VIP) query result serialized in
// format f. It is rebuilt only after a change to the registry.
func (s *Store) VIPPayload(vip string, secure bool, f eureka.Format) *Payload {
	s.counters.vipFetches.Add(1)
	s.mu.RLock()
	defer s.mu.RUnlock()
	kind := kindVIP
	if secure {
		kind = kindSVIP
	}
	return s.namedPayloadLocked(namedKey{kind, vip, f}, s.version.Load(), func() []byte {
		return eureka.AppendApplications(nil, f, s.vipLocked(vip, secure))
	})
}

func (s *Store) namedPayloadLocked(key namedKey, version uint64, render func() []byte) *Payload {
	c := &s.payloads
	c.namedMu.Lock()
	p := c.named[key]
	c.namedMu.Unlock()
	if p != nil && p.version == version {
		return p
	}
	p = &Payload{version: version, Body: render()}
	c.namedMu.Lock()
	if len(c.named) >= maxNamedPayloads {
		clear(c.named)
	}
	c.named[key] = p
	c.namedMu.Unlock()
	return p
}

// sizedLike returns an empty buffer with room for a payload a little larger
// than prev, so a rebuild does not grow its buffer step by step.
func sizedLike(prev *Payload) []byte {
	if prev == nil {
		return nil
	}
	return make([]byte, 0, len(prev.Body)+len(prev.Body)/8+512)
}
