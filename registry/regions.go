package registry

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
)

// Remote regions: the registries of other Eureka clusters that this one
// serves on request, as Eureka's RemoteRegionRegistry. A remote region is a
// read-only source: whoever reads it (package registry/regions, over the
// discovery client) hands each registry it fetched to UpdateRegion, and
// the Store keeps it beside its own leases, never in them: no lease, no
// eviction, no replication to peers, no change in the local change stream.
// Its changes go to a log of their own, so that a delta or a watch with
// regions=... carries them, and its instances count in the reconcile hash
// of a read that asked for them.

// RemoteRegion is one remote region a Store serves.
type RemoteRegion struct {
	// Name is the region's name, matched without regard to case against a
	// read's regions parameter.
	Name string
	// AppWhitelist is the apps of this region that reads merge in
	// (eureka.server.remoteRegion.<name>.appWhiteList). Default: the
	// Store's RemoteRegionAppWhitelist, and without one every app.
	AppWhitelist []string
}

// ErrRegionNotReady is the answer to a read that asks for a remote region
// whose registry has not been read yet: Eureka answers it 403.
var ErrRegionNotReady = errors.New("registry: a requested remote region's registry is not ready yet")

// RegionChange is one change of a remote region's registry, as its feed
// reported it: an instance added, modified or deleted.
type RegionChange struct {
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

// RegionState is what a Store knows of one remote region, for status
// pages and metrics.
type RegionState struct {
	Name string
	// Ready is true once its registry has been read once: until then a
	// read asking for it is refused.
	Ready bool
	// Dropped is true when it stopped answering for longer than
	// RemoteRegionRetention and its instances were dropped.
	Dropped bool
	// Apps and Instances count what the Store holds of it.
	Apps, Instances int
	// LastSync is when its registry was last read, LastAttempt when the
	// last read was tried, and LastError that read's error ("" when it
	// succeeded).
	LastSync, LastAttempt time.Time
	LastError             string
	// Syncs and Failures count the reads that succeeded and failed.
	Syncs, Failures uint64
}

// regionSet is the Store's remote regions and their change log.
type regionSet struct {
	order  []*region // as configured
	byName map[string]*region

	// mu serializes the updates and guards each region's bookkeeping and
	// the log; the instances are read lock-free through region.snap.
	mu      sync.Mutex
	version atomic.Uint64
	log     []RegionChange
	base    uint64 // the version just before log[0]
	purges  atomic.Uint64
	wake    atomic.Pointer[chan struct{}]

	// build is held by the build of a document read with regions (kept
	// in payloadCache.named): one at a time; readers of a fresh one do
	// not wait.
	build sync.Mutex
}

// region is one remote region.
type region struct {
	name      string
	whitelist map[string]bool // nil: every app
	snap      atomic.Pointer[regionSnap]

	// Under regionSet.mu.
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

func (rs *regionSet) init(cfg Config) {
	rs.byName = map[string]*region{}
	ch := make(chan struct{})
	rs.wake.Store(&ch)
	global := whitelist(cfg.RemoteRegionAppWhitelist)
	for _, rr := range cfg.RemoteRegions {
		name := strings.ToLower(strings.TrimSpace(rr.Name))
		if name == "" || rs.byName[name] != nil {
			continue
		}
		r := &region{name: name, whitelist: global}
		if rr.AppWhitelist != nil {
			r.whitelist = whitelist(rr.AppWhitelist)
		}
		r.snap.Store(&regionSnap{apps: map[string]*regionApp{}})
		rs.byName[name] = r
		rs.order = append(rs.order, r)
	}
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

// Region returns this registry's own region (Config.Region).
func (s *Store) Region() string { return s.cfg.Region }

// UpdateRegion makes doc the registry of the remote region name, read at
// at: the instances it adds, changes or no longer holds become that
// region's changes (for deltas and watches that ask for it), and the region
// is ready and no longer dropped. A region the Store was not configured
// with is an error.
func (s *Store) UpdateRegion(name string, doc *eureka.Applications, at time.Time) error {
	rs := &s.regions
	r := rs.byName[strings.ToLower(name)]
	if r == nil {
		return errors.New("registry: no remote region " + name)
	}
	rs.mu.Lock()
	before := rs.version.Load()
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
				rs.recordLocked(r.name, app, id, i, eureka.ActionAdded, now)
				changed = true
			case was != i && differs(was, i):
				rs.recordLocked(r.name, app, id, i, eureka.ActionModified, now)
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
				rs.recordLocked(r.name, app, id, i, eureka.ActionDeleted, now)
			}
		}
	}
	r.snap.Store(&regionSnap{apps: apps, instances: n})
	r.ready, r.dropped, r.lastSync, r.lastAttempt, r.lastErr = true, false, at, at, ""
	r.syncs++
	moved := rs.version.Load() != before
	rs.mu.Unlock()
	if moved {
		rs.wakeAll()
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

// RegionFailed records that reading the remote region name failed at at.
// The region keeps serving its last registry until RemoteRegionRetention
// has passed since its last successful read (DropStaleRegions).
func (s *Store) RegionFailed(name string, at time.Time, err error) {
	rs := &s.regions
	r := rs.byName[strings.ToLower(name)]
	if r == nil || err == nil {
		return
	}
	rs.mu.Lock()
	r.lastAttempt, r.lastErr = at, err.Error()
	r.failures++
	rs.mu.Unlock()
}

// DropStaleRegions drops the instances of every remote region whose last
// successful read is older than RemoteRegionRetention (each as a DELETED
// change): reads go on without them until the region answers again. The
// Store's retention loop runs it; tests call it with a fake clock.
func (s *Store) DropStaleRegions() {
	rs := &s.regions
	now := s.clock.Now()
	cutoff := now.Add(-s.cfg.RemoteRegionRetention)
	moved := false
	rs.mu.Lock()
	for _, r := range rs.order {
		if !r.ready || r.dropped || !r.lastSync.Before(cutoff) {
			continue
		}
		old := r.snap.Load()
		for app, a := range old.apps {
			for _, i := range a.all {
				rs.recordLocked(r.name, app, i.ID(), i, eureka.ActionDeleted, now.UnixMilli())
				moved = true
			}
		}
		r.snap.Store(&regionSnap{apps: map[string]*regionApp{}})
		r.dropped = true
		s.log.Warn("remote region stopped answering; its instances are dropped",
			zap.String("region", r.name), zap.Duration("retention", s.cfg.RemoteRegionRetention))
	}
	rs.mu.Unlock()
	if moved {
		rs.wakeAll()
	}
}

// recordLocked appends one change of region to the log. The caller holds
// rs.mu.
func (rs *regionSet) recordLocked(region, app, id string, i *eureka.InstanceInfo, action eureka.ActionType, now int64) {
	c := *i
	c.ActionType = action
	v := rs.version.Add(1)
	if len(rs.log) == 0 {
		rs.base = v - 1
	}
	rs.log = append(rs.log, RegionChange{Version: v, Region: region, App: app, ID: id, Instance: &c, At: now})
}

// purge drops the changes older than cutoff (ms), as the local change log.
func (rs *regionSet) purge(cutoff int64) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	n := 0
	for n < len(rs.log) && rs.log[n].At < cutoff {
		n++
	}
	if n == 0 {
		return
	}
	rs.base = rs.log[n-1].Version
	rs.log = append(make([]RegionChange, 0, len(rs.log)-n), rs.log[n:]...)
	rs.purges.Add(1)
}

// after returns the retained changes with a version above v, and false if
// some of them are no longer retained or v is not a version yet.
func (rs *regionSet) after(v uint64) ([]RegionChange, uint64, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	version := rs.version.Load()
	if v > version || v < rs.base {
		return nil, version, false
	}
	if len(rs.log) == 0 || v == version {
		return nil, version, true
	}
	from := int(v - rs.base)
	return rs.log[from:len(rs.log):len(rs.log)], version, true
}

func (rs *regionSet) wakeAll() {
	next := make(chan struct{})
	close(*rs.wake.Swap(&next))
}

// RegionStates reports each remote region's state, in configured order.
func (s *Store) RegionStates() []RegionState {
	rs := &s.regions
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]RegionState, 0, len(rs.order))
	for _, r := range rs.order {
		snap := r.snap.Load()
		out = append(out, RegionState{
			Name: r.name, Ready: r.ready, Dropped: r.dropped, Apps: len(snap.apps), Instances: snap.instances,
			LastSync: r.lastSync, LastAttempt: r.lastAttempt, LastError: r.lastErr, Syncs: r.syncs, Failures: r.failures,
		})
	}
	return out
}

// RemoteRegions returns the names of the configured remote regions, lower
// case, in configured order.
func (s *Store) RemoteRegions() []string {
	out := make([]string, len(s.regions.order))
	for n, r := range s.regions.order {
		out[n] = r.name
	}
	return out
}

// ParseRegions reads a read's regions parameter as Eureka does (lower case,
// comma-separated, sorted) and keeps the configured regions among them,
// sorted and without repeats; regions this Store does not serve are
// ignored, as Eureka ignores them. The error is a *ListTooLongError for a
// list over MaxQueryListBytes or MaxQueryListNames (the same bounds as
// apps=), and ErrRegionNotReady when one of them has not been read yet.
func (s *Store) ParseRegions(param string) ([]string, error) {
	out, err := parseList("regions", param, strings.ToLower, func(name string) bool { return s.regions.byName[name] != nil })
	if err != nil {
		return nil, err
	}
	s.regions.mu.Lock()
	defer s.regions.mu.Unlock()
	for _, name := range out {
		if !s.regions.byName[name].ready {
			return out, ErrRegionNotReady
		}
	}
	return out, nil
}

// InstancesIn returns the UP instances of app in region, sorted by id:
// this registry's own (Instances) for its region or "", a remote region's
// copy (within its whitelist) for a remote one, nil for any other. It
// takes no lock.
func (s *Store) InstancesIn(app, region string) []*eureka.InstanceInfo {
	if region == "" || strings.EqualFold(region, s.cfg.Region) {
		return s.Instances(app)
	}
	r := s.regions.byName[strings.ToLower(region)]
	if r == nil || !r.allows(app) {
		return nil
	}
	if a := r.snap.Load().apps[app]; a != nil {
		return a.up
	}
	return nil
}
