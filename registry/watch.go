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
//     ParseToken tells, or newer than the Store's version) or older
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

// Version is what a reader holds: the version of the local registry its
// last read reflected and, for a read with remote regions, the regions'
// version too (Poll.Remote).
type Version struct {
	Local, Remote uint64
	// Regions is true for a version of a read with remote regions: only
	// its token carries Remote, so that the tokens of local reads are
	// those readers have always been given.
	Regions bool
}

// Token renders v for readers that may meet other Stores (a client that
// fails over, a server that restarts): "<epoch>.<local>", the epoch in
// hex, and for a version of a read with regions "<epoch>.<local>.<remote>".
func (s *Store) Token(v Version) string {
	t := strconv.FormatUint(s.epoch, 16) + "." + strconv.FormatUint(v.Local, 10)
	if v.Regions {
		t += "." + strconv.FormatUint(v.Remote, 10)
	}
	return t
}

// ParseToken reads a Token. ok is false for a token of another Store
// (another epoch) or a malformed one: the reader must read the whole
// registry again.
func (s *Store) ParseToken(t string) (v Version, ok bool) {
	epoch, rest, found := strings.Cut(t, ".")
	if !found {
		return v, false
	}
	local, remote, regions := strings.Cut(rest, ".")
	e, err1 := strconv.ParseUint(epoch, 16, 64)
	l, err2 := strconv.ParseUint(local, 10, 64)
	var err3 error
	v = Version{Local: l, Regions: regions}
	if regions {
		v.Remote, err3 = strconv.ParseUint(remote, 10, 64)
	}
	return v, err1 == nil && err2 == nil && err3 == nil && e == s.epoch
}

// Poll is one long poll: the changes after a version, waiting for one.
type Poll struct {
	// Since is the version the reader holds; Since.Remote counts with
	// Remote only.
	Since Version
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
	// Remote and Regions, if set, are the remote regions (named Regions)
	// whose changes after Since.Remote the answer carries too, and whose
	// instances its hash counts. Default: none, the local registry alone.
	Remote  Remote
	Regions []string
}

// Polled is a long poll's answer.
type Polled struct {
	// Version is the version the answer reflects, to poll from next (with
	// Remote, Version.Regions is set). When nothing changed it is still
	// the Store's version: with Apps, it moves past the other apps'
	// changes.
	Version Version
	// Changes are the changes after Since (of Apps), oldest first. Empty
	// when the wait ended without one. Shared: do not modify them.
	Changes []Change
	// RemoteChanges are, with Poll.Remote, the remote regions' changes
	// after Since.Remote, as delta entries per application.
	RemoteChanges []*eureka.Application
	// Hash is the reconcile hash of the registry (or of Apps) at Version,
	// with the remote regions' instances.
	Hash string
	// Stale is true when Since is not a version this Store can answer for
	// (newer than its version, or older than its change log, or than the
	// remote regions'): the reader must read the whole registry. Changes
	// and Hash are then empty.
	Stale bool
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
		version, changes, counts, ok := s.changesFor(p.Since.Local, p.Apps)
		at := Version{Local: version, Regions: p.Remote != nil}
		if !ok {
			return Polled{Version: at, Stale: true}
		}
		var remote RemoteChanges
		if p.Remote != nil {
			remote, ok = p.Remote.ChangesAfter(p.Regions, p.Since.Remote, p.Apps)
			at.Remote = remote.Version
			if !ok {
				return Polled{Version: at, Stale: true}
			}
			AddCounts(&counts, remote.Counts)
		}
		if len(changes) > 0 || len(remote.Apps) > 0 || ctx.Err() != nil {
			return Polled{Version: at, Changes: changes, RemoteChanges: remote.Apps, Hash: counts.Hash()}
		}
		// Nothing for this reader up to version: wait for a newer change.
		s.await(ctx, version, remote.Wake)
	}
}

// watch waits until the Store has a change newer than version since, and
// returns the current version. It returns at once if there already is one,
// and ctx.Err() if ctx ends first. It starts no goroutine: waiting costs
// the caller's own goroutine and nothing per watcher in the Store.
func (s *Store) watch(ctx context.Context, since uint64) (uint64, error) {
	s.await(ctx, since, nil)
	if v := s.stream.delivered.Load(); v > since {
		return v, nil
	}
	return s.stream.delivered.Load(), ctx.Err()
}

// await returns once the Store has a change newer than since, remote is
// closed (nil: never) or ctx ends. The watch is counted as held
// (Totals.WatchesHeld) while it waits.
func (s *Store) await(ctx context.Context, since uint64, remote <-chan struct{}) {
	st := &s.stream
	for {
		wake := *st.wake.Load()
		if st.delivered.Load() > since {
			return
		}
		s.counters.watchesHeld.Add(1)
		select {
		case <-wake:
			s.counters.watchesHeld.Add(-1)
		case <-remote:
			s.counters.watchesHeld.Add(-1)
			return
		case <-ctx.Done():
			s.counters.watchesHeld.Add(-1)
			return
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
			AddCounts(&counts, a.counts)
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
