package registry

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// Watching the Store: a reader holds a version (of a full read or of an
// earlier answer), asks for the changes after it and, if there are none
// yet, waits for one. Poll is that long poll, Consul's blocking query over
// the change stream, with one rule for everyone who serves it (the REST
// API's watch, the dashboard's api/changes):
//
//   - The wait: ParseWait reads it as seconds ("30", "0.5") or a Go
//     duration ("30s"); none given is DefaultWait; it is bounded by the
//     server's bound, DefaultMaxWait unless set (negative: never wait).
//   - Staleness: a version is stale, and the reader must read the whole
//     registry again, when it is not this Store's (of another epoch, as
//     ParseVersionToken tells, or newer than the Store's version) or older
//     than the change log (DeltaRetention).
//
// Each endpoint keeps its own answer to staleness (410 Gone; a reset).

const (
	// DefaultWait is how long a long poll waits for a change when the
	// reader gives no wait.
	DefaultWait = 30 * time.Second
	// DefaultMaxWait bounds the wait a reader may ask for, unless the
	// server sets its own bound.
	DefaultMaxWait = 60 * time.Second
)

// ErrBadWait is ParseWait's error: the wait is neither seconds nor a
// duration, or is negative.
var ErrBadWait = errors.New("invalid wait: give seconds or a duration such as 30s")

// ParseWait reads a long poll's wait as a reader sends it: seconds ("30",
// "0.5") or a Go duration ("30s", "1m"); "" (no wait given) is
// DefaultWait. The wait is then bounded by bound, the server's maximum:
// DefaultMaxWait when bound is 0, and no wait at all when it is negative.
// A negative, infinite or malformed wait is ErrBadWait.
func ParseWait(v string, bound time.Duration) (time.Duration, error) {
	switch {
	case bound == 0:
		bound = DefaultMaxWait
	case bound < 0:
		bound = 0
	}
	if v == "" {
		return min(DefaultWait, bound), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(secs) || math.IsInf(secs, 0) {
			return 0, ErrBadWait
		}
		if secs > bound.Seconds() { // also keeps huge values from overflowing
			return bound, nil
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 {
		return 0, ErrBadWait
	}
	return min(d, bound), nil
}

// Epoch identifies this Store: versions number one Store's changes, so a
// reader holding a version of another epoch (another node, or this process
// before a restart) must read the whole registry again. It is random,
// chosen when the Store is created, and never 0.
func (s *Store) Epoch() uint64 { return s.epoch }

// VersionToken renders version v of this Store for readers that may meet
// other Stores (a client that fails over, a server that restarts):
// "<epoch>.<v>", the epoch in hex.
func (s *Store) VersionToken(v uint64) string {
	return strconv.FormatUint(s.epoch, 16) + "." + strconv.FormatUint(v, 10)
}

// ParseVersionToken reads a VersionToken. ok is false for a token of
// another Store (another epoch) or a malformed one: the reader must read
// the whole registry again.
func (s *Store) ParseVersionToken(t string) (v uint64, ok bool) {
	epoch, n, found := strings.Cut(t, ".")
	if !found {
		return 0, false
	}
	e, err1 := strconv.ParseUint(epoch, 16, 64)
	v, err2 := strconv.ParseUint(n, 10, 64)
	return v, err1 == nil && err2 == nil && e == s.epoch
}

// Poll is one long poll: the changes after a version, waiting for one.
type Poll struct {
	// Since is the version the reader holds.
	Since uint64
	// Apps, if not empty, restricts the answer to these applications'
	// changes (as Interest lists them), and its hash to their instances;
	// changes of other apps move the answer's version but do not end the
	// wait.
	Apps []string
	// Wait is how long to wait for a change, from ParseWait. 0 answers at
	// once.
	Wait time.Duration
	// Stop, if set, ends the wait too: a server's or a handler's own end,
	// beside the request's context.
	Stop context.Context
	// Regions, if not empty, are remote regions (from ParseRegions) whose
	// changes after SinceRegions (the remote version of a RegionsToken)
	// the answer carries too, and whose instances its hash counts.
	Regions      []string
	SinceRegions uint64
}

// Polled is a long poll's answer.
type Polled struct {
	// Version is the Store's version the answer reflects, to poll from
	// next. When nothing changed it is still the Store's version: with
	// Apps, it moves past the other apps' changes.
	Version uint64
	// Changes are the changes after Since (of Apps), oldest first. Empty
	// when the wait ended without one. Shared: do not modify them.
	Changes []Change
	// Hash is the reconcile hash of the registry (or of Apps) at Version.
	Hash string
	// Stale is true when Since is not a version this Store can answer for
	// (newer than its version, or older than its change log): the reader
	// must read the whole registry. Changes and Hash are then empty.
	Stale bool
	// RegionVersion and RegionChanges are, with Poll.Regions, the remote
	// regions' version to poll from next and their changes after
	// SinceRegions, as delta entries per application.
	RegionVersion uint64
	RegionChanges []*eureka.Application
}

// Poll answers p: at once when there are changes after p.Since (of
// p.Apps) or p.Since is stale, else when a change arrives, or, with no
// change, when p.Wait passes, ctx ends or p.Stop ends. It starts no
// goroutine and holds nothing in the Store while it waits.
func (s *Store) Poll(ctx context.Context, p Poll) Polled {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, p.Wait)
	defer cancel()
	if p.Stop != nil {
		defer context.AfterFunc(p.Stop, cancel)()
	}
	for {
		version, changes, counts, ok := s.changesFor(p.Since, p.Apps)
		if !ok {
			return Polled{Version: version, Stale: true}
		}
		var rversion uint64
		var rchanges []*eureka.Application
		if len(p.Regions) > 0 {
			var rcounts eureka.StatusCounts
			rversion, rchanges, rcounts, ok = s.pollRegions(p)
			if !ok {
				return Polled{Version: version, RegionVersion: rversion, Stale: true}
			}
			addCounts(&counts, rcounts)
		}
		if len(changes) > 0 || len(rchanges) > 0 || ctx.Err() != nil {
			return Polled{Version: version, Changes: changes, Hash: counts.Hash(), RegionVersion: rversion, RegionChanges: rchanges}
		}
		// Nothing for this reader up to version: wait for a newer change.
		if len(p.Regions) > 0 {
			s.waitRegions(ctx, version, rversion)
		} else {
			s.watch(ctx, version)
		}
	}
}

// watch waits until the Store has a change newer than version since, and
// returns the current version. It returns at once if there already is one,
// and ctx.Err() if ctx ends first. It starts no goroutine: waiting costs
// the caller's own goroutine and nothing per watcher in the Store.
func (s *Store) watch(ctx context.Context, since uint64) (uint64, error) {
	st := &s.stream
	for {
		wake := *st.wake.Load()
		if v := st.delivered.Load(); v > since {
			return v, nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return st.delivered.Load(), ctx.Err()
		}
	}
}

// changesSince returns the changes after version since, oldest first, up
// to the current version. ok is false when some of them are no longer
// retained (older than DeltaRetention) or since is not a version of this
// Store (newer than its current one): the caller must then read the whole
// registry. The slice is shared and must not be modified.
func (s *Store) changesSince(since uint64) (changes []Change, ok bool) {
	upTo := s.stream.delivered.Load()
	if since > upTo {
		return nil, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.changes.after(since, upTo)
}

// changesFor returns the registry's version, the changes after version
// since (only those of apps, if apps is not empty), and the status counts
// of the registry (or of those apps) at that version, all read at one
// instant. ok is false when since is not a version this Store can answer
// for (older than the retained log, or newer than its current version):
// the reader must read the whole registry. The slice is shared and must
// not be modified.
func (s *Store) changesFor(since uint64, apps []string) (version uint64, changes []Change, counts eureka.StatusCounts, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	version = s.version.Load()
	if since > version {
		return version, nil, counts, false
	}
	all, ok := s.changes.after(since, version)
	if !ok {
		return version, nil, counts, false
	}
	if len(apps) == 0 {
		return version, all, s.counts, true
	}
	for _, app := range apps {
		if a := s.apps[app]; a != nil {
			for st, n := range a.counts {
				counts[st] += n
			}
		}
	}
	want := nameSet(apps)
	for _, c := range all {
		if want.has(c.App) {
			changes = append(changes, c)
		}
	}
	return version, changes, counts, true
}
