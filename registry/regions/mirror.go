// Package regions holds a Store's remote regions: the Mirror (this
// file), a read-only copy of each remote region's registry with its own
// change log, one per Store (MirrorOf); the reads and long polls merged
// with it (mirror_read.go); and the Store as a gateway's source of
// instances in every region (instances.go). Package registry/regions/feeds
// fills it.
package regions

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

// The Mirror holds the remote regions' registries, as Eureka's
// RemoteRegionRegistry: each a read-only copy that the Feeds (or a test)
// hand it (Update), kept beside the Store's leases, never in them: no
// lease, no eviction, no replication to peers, no change in the local
// change stream. Its changes go to a log of their own, so that a delta or
// a watch with regions=... carries them, and its instances count in the
// reconcile hash of a read that asked for them.

// ErrRegionNotReady is the answer to a read that asks for a remote region
// whose registry has not been read yet: Eureka answers it 403.
var ErrRegionNotReady = errors.New("registry: a requested remote region's registry is not ready yet")

// Change is one change of a remote region's registry, as its feed
// reported it: an instance added, modified or deleted.
type Change struct {
	// Version numbers the remote regions' changes, all regions together:
	// one more per change, with no gaps.
	Version uint64
	// Region, App (upper case) and ID name the instance.
	Region, App, ID string
	// Instance is the instance, its actionType ADDED, MODIFIED or
	// DELETED. It is shared and must not be modified.
	Instance *eureka.InstanceInfo
	// At is when the change was recorded, in milliseconds.
	At int64
}

// State is what the Mirror knows of one remote region, for status pages
// and metrics.
type State struct {
	Name string
	// Ready is true once its registry has been read once: until then a
	// read asking for it is refused.
	Ready bool
	// Dropped is true when it stopped answering for longer than
	// RemoteRegionRetention and its instances were dropped.
	Dropped bool
	// Apps and Instances count what the Mirror holds of it.
	Apps, Instances int
	// LastSync is when its registry was last read, LastAttempt when the
	// last read was tried, and LastError that read's error ("" when it
	// succeeded).
	LastSync, LastAttempt time.Time
	LastError             string
	// Syncs and Failures count the reads that succeeded and failed.
	Syncs, Failures uint64
}

// Mirror is a Store's remote regions (registry.Config.RemoteRegions):
// their registries and their change log. MirrorOf gives it.
type Mirror struct {
	store *registry.Store
	cfg   registry.Config
	order []*region // as configured
	// byName is read without a lock: it is not written after newMirror.
	byName map[string]*region

	// mu serializes the updates and guards each region's bookkeeping and
	// the log; the instances are read lock-free through region.snap.
	mu      sync.Mutex
	version atomic.Uint64
	log     []Change
	base    uint64 // the version just before log[0]
	purges  atomic.Uint64
	wake    atomic.Pointer[chan struct{}]
}

// region is one remote region.
type region struct {
	name      string
	whitelist map[string]bool // nil: every app
	snap      atomic.Pointer[regionSnap]

	// Under Mirror.mu.
	ready, dropped        bool
	lastSync, lastAttempt time.Time
	lastErr               string
	syncs, failures       uint64
}

// regionSnap is an immutable copy of a remote region's registry.
type regionSnap struct {
	apps      map[string]*regionApp
	instances int
}

// regionApp is one application of a remote region: every status, and the
// UP ones, sorted by id, and its instances by id for the diff.
type regionApp struct {
	all, up []*eureka.InstanceInfo
	byID    map[string]*eureka.InstanceInfo
	counts  eureka.StatusCounts
}

func newRegionApp(byID map[string]*eureka.InstanceInfo) *regionApp {
	a := &regionApp{byID: byID, all: make([]*eureka.InstanceInfo, 0, len(byID))}
	for _, i := range byID {
		a.all = append(a.all, i)
		a.counts.Add(i.Status)
	}
	eureka.SortInstances(a.all)
	for _, i := range a.all {
		if i.Status == eureka.StatusUp {
			a.up = append(a.up, i)
		}
	}
	return a
}

// MirrorOf returns store's Mirror: one per Store, made at the first call
// and aged by the Store's retention loop (registry.Store.HoldMirror).
func MirrorOf(store *registry.Store) *Mirror {
	return store.HoldMirror(func() registry.Mirror { return newMirror(store) }).(*Mirror)
}

func newMirror(store *registry.Store) *Mirror {
	cfg := store.Config()
	m := &Mirror{store: store, cfg: cfg, byName: map[string]*region{}}
	ch := make(chan struct{})
	m.wake.Store(&ch)
	global := whitelist(cfg.RemoteRegionAppWhitelist)
	for _, rr := range cfg.RemoteRegions {
		name := strings.ToLower(strings.TrimSpace(rr.Name))
		if name == "" || m.byName[name] != nil {
			continue
		}
		r := &region{name: name, whitelist: global}
		if rr.AppWhitelist != nil {
			r.whitelist = whitelist(rr.AppWhitelist)
		}
		r.snap.Store(&regionSnap{apps: map[string]*regionApp{}})
		m.byName[name] = r
		m.order = append(m.order, r)
	}
	return m
}

func whitelist(apps []string) map[string]bool {
	if apps == nil {
		return nil
	}
	m := map[string]bool{}
	for _, a := range apps {
		if a = strings.ToUpper(strings.TrimSpace(a)); a != "" {
			m[a] = true
		}
	}
	return m
}

// allows reports whether reads merge in app of r.
func (r *region) allows(app string) bool { return r.whitelist == nil || r.whitelist[app] }

// Update makes doc the registry of the remote region name, read at at:
// the instances it adds, changes or no longer holds become that region's
// changes (for deltas and watches that ask for it), and the region is
// ready and no longer dropped. A region the Store was not configured with
// is an error.
func (m *Mirror) Update(name string, doc *eureka.Applications, at time.Time) error {
	r := m.byName[strings.ToLower(name)]
	if r == nil {
		return errors.New("registry: no remote region " + name)
	}
	m.mu.Lock()
	before := m.version.Load()
	old := r.snap.Load()
	next := map[string]map[string]*eureka.InstanceInfo{}
	for _, a := range doc.Applications {
		for _, i := range a.Instances {
			app := i.App
			if app == "" {
				app = a.Name
			}
			app = strings.ToUpper(app)
			byID := next[app]
			if byID == nil {
				byID = map[string]*eureka.InstanceInfo{}
				next[app] = byID
			}
			byID[i.ID()] = i
		}
	}
	now := at.UnixMilli()
	apps := make(map[string]*regionApp, len(next))
	n := 0
	for app, byID := range next {
		n += len(byID)
		prev := old.apps[app]
		changed := prev == nil || len(prev.byID) != len(byID)
		for id, i := range byID {
			var was *eureka.InstanceInfo
			if prev != nil {
				was = prev.byID[id]
			}
			switch {
			case was == nil:
				m.recordLocked(r.name, app, id, i, eureka.ActionAdded, now)
				changed = true
			case was != i && differs(was, i):
				m.recordLocked(r.name, app, id, i, eureka.ActionModified, now)
				changed = true
			case was != i:
				byID[id] = was // the same instance: keep the one the views hold
			}
		}
		if !changed && prev != nil {
			apps[app] = prev
			continue
		}
		apps[app] = newRegionApp(byID)
	}
	for app, prev := range old.apps {
		for id, i := range prev.byID {
			if _, ok := next[app][id]; !ok {
				m.recordLocked(r.name, app, id, i, eureka.ActionDeleted, now)
			}
		}
	}
	r.snap.Store(&regionSnap{apps: apps, instances: n})
	r.ready, r.dropped, r.lastSync, r.lastAttempt, r.lastErr = true, false, at, at, ""
	r.syncs++
	moved := m.version.Load() != before
	m.mu.Unlock()
	if moved {
		m.wakeAll()
	}
	return nil
}

// differs reports whether b is a change of a that a client must see: its
// status, override, timestamps or metadata moved.
func differs(a, b *eureka.InstanceInfo) bool {
	return a.Status != b.Status || a.OverriddenStatus != b.OverriddenStatus ||
		a.LastUpdatedTimestamp != b.LastUpdatedTimestamp || a.LastDirtyTimestamp != b.LastDirtyTimestamp ||
		len(a.Metadata) != len(b.Metadata) || a.HostName != b.HostName || a.IPAddr != b.IPAddr ||
		a.Port != b.Port || a.SecurePort != b.SecurePort
}

// Failed records that reading the remote region name failed at at. The
// region keeps serving its last registry until RemoteRegionRetention has
// passed since its last successful read (DropStale).
func (m *Mirror) Failed(name string, at time.Time, err error) {
	r := m.byName[strings.ToLower(name)]
	if r == nil || err == nil {
		return
	}
	m.mu.Lock()
	r.lastAttempt, r.lastErr = at, err.Error()
	r.failures++
	m.mu.Unlock()
}

// DropStale drops the instances of every remote region whose last
// successful read is older than RemoteRegionRetention (each as a DELETED
// change): reads go on without them until the region answers again. The
// Store's retention loop runs it; tests call it with a fake clock.
func (m *Mirror) DropStale() {
	now := m.cfg.Clock.Now()
	cutoff := now.Add(-m.cfg.RemoteRegionRetention)
	moved := false
	m.mu.Lock()
	for _, r := range m.order {
		if !r.ready || r.dropped || !r.lastSync.Before(cutoff) {
			continue
		}
		old := r.snap.Load()
		for app, a := range old.apps {
			for _, i := range a.all {
				m.recordLocked(r.name, app, i.ID(), i, eureka.ActionDeleted, now.UnixMilli())
				moved = true
			}
		}
		r.snap.Store(&regionSnap{apps: map[string]*regionApp{}})
		r.dropped = true
		m.cfg.Logger.Warn("remote region stopped answering; its instances are dropped",
			zap.String("region", r.name), zap.Duration("retention", m.cfg.RemoteRegionRetention))
	}
	m.mu.Unlock()
	if moved {
		m.wakeAll()
	}
}

// recordLocked appends one change of region to the log. The caller holds
// m.mu.
func (m *Mirror) recordLocked(region, app, id string, i *eureka.InstanceInfo, action eureka.ActionType, now int64) {
	c := *i
	c.ActionType = action
	v := m.version.Add(1)
	if len(m.log) == 0 {
		m.base = v - 1
	}
	m.log = append(m.log, Change{Version: v, Region: region, App: app, ID: id, Instance: &c, At: now})
}

// Purge drops the changes older than cutoff (ms), as the local change log:
// the Store's PurgeDeltas runs it.
func (m *Mirror) Purge(cutoff int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for n < len(m.log) && m.log[n].At < cutoff {
		n++
	}
	if n == 0 {
		return
	}
	m.base = m.log[n-1].Version
	m.log = append(make([]Change, 0, len(m.log)-n), m.log[n:]...)
	m.purges.Add(1)
}

func (m *Mirror) wakeAll() {
	next := make(chan struct{})
	close(*m.wake.Swap(&next))
}

// States reports each remote region's state, in configured order.
func (m *Mirror) States() []State {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]State, 0, len(m.order))
	for _, r := range m.order {
		snap := r.snap.Load()
		out = append(out, State{
			Name: r.name, Ready: r.ready, Dropped: r.dropped, Apps: len(snap.apps), Instances: snap.instances,
			LastSync: r.lastSync, LastAttempt: r.lastAttempt, LastError: r.lastErr, Syncs: r.syncs, Failures: r.failures,
		})
	}
	return out
}

// Names returns the names of the configured remote regions, lower case,
// in configured order.
func (m *Mirror) Names() []string {
	out := make([]string, len(m.order))
	for n, r := range m.order {
		out[n] = r.name
	}
	return out
}
