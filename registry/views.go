package registry

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// appView is an immutable list of one application's instances, published
// after each change to the app so that routing reads it without locks.
type appView struct {
	all []*eureka.InstanceInfo // every status, sorted by id
	up  []*eureka.InstanceInfo // the UP ones, same order
}

// views maps app name to its view. The maps are copy-on-write and change
// only when an app appears or disappears; a change within an app swaps the
// entry's pointer. Readers pay a short hash, one map read and one atomic
// load. Apps are spread over shards so that adding one copies only its
// shard, not every app.
//
// Views consume the change stream: each change replaces, inserts or
// removes one instance by binary search in the app's pending view, not a
// rebuild and re-sort of the app; readers publish a copy when they find it
// changed.
type views struct {
	shards [viewShards]atomic.Pointer[map[string]*viewEntry]
	vips   vipIndex
}

const viewShards = 64

// viewEntry is one app's view. Delivery edits pending in place, under mu,
// and marks it dirty; the first read after a change publishes a copy. So a
// burst of changes with no read between costs one insertion each (a move
// of pointers, no allocation), and a copy of the app is made at most once
// per read that follows a change, never once per change.
type viewEntry struct {
	v     atomic.Pointer[appView] // published: immutable
	dirty atomic.Bool             // pending differs from v

	mu      sync.Mutex
	pending appView // owned by delivery; copied on publish
}

// view returns the published view, publishing pending first if it
// changed since.
func (e *viewEntry) view() *appView {
	if e.dirty.Load() {
		e.mu.Lock()
		if e.dirty.Load() {
			e.v.Store(&appView{all: slices.Clone(e.pending.all), up: slices.Clone(e.pending.up)})
			e.dirty.Store(false)
		}
		e.mu.Unlock()
	}
	return e.v.Load()
}

// shard picks an app's shard with FNV-1a.
func shard(app string) int {
	h := uint32(2166136261)
	for i := 0; i < len(app); i++ {
		h ^= uint32(app[i])
		h *= 16777619
	}
	return int(h % viewShards)
}

func (vs *views) entry(app string) *viewEntry {
	if m := vs.shards[shard(app)].Load(); m != nil {
		return (*m)[app]
	}
	return nil
}

// setEntry replaces app's shard with a copy that has app added (e != nil)
// or removed. Only the stream's delivery calls it, one change at a time.
func (vs *views) setEntry(app string, e *viewEntry) {
	sh := &vs.shards[shard(app)]
	next := map[string]*viewEntry{}
	if old := sh.Load(); old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	if e == nil {
		delete(next, app)
	} else {
		next[app] = e
	}
	sh.Store(&next)
}

// apply brings the views up to date with changes, in order. Each app
// touched is copied once, however many of its changes the batch holds: a
// delivery under load carries several, and a big app's copy is its cost.
func (vs *views) apply(changes []Change) {
	if len(changes) == 1 {
		vs.applyApp(changes[0].App, changes)
		return
	}
	var order []string
	byApp := map[string][]Change{}
	for _, c := range changes {
		if _, seen := byApp[c.App]; !seen {
			order = append(order, c.App)
		}
		byApp[c.App] = append(byApp[c.App], c)
	}
	for _, app := range order {
		vs.applyApp(app, byApp[app])
	}
}

// applyApp applies one app's changes to its pending view.
func (vs *views) applyApp(app string, changes []Change) {
	e := vs.entry(app)
	if e == nil {
		e = &viewEntry{}
		e.v.Store(&appView{})
		vs.setEntry(app, e)
	}
	e.mu.Lock()
	p := &e.pending
	for n := range changes {
		c := &changes[n]
		var old, now *eureka.InstanceInfo
		if pos, found := slices.BinarySearchFunc(p.all, c.ID, byID); found {
			old = p.all[pos]
		}
		if !c.Kind.Removes() {
			now = c.Instance
		}
		vs.vips.update(app, old, now)
		p.all = upsert(p.all, c.ID, now)
		if now != nil && now.Status != eureka.StatusUp {
			now = nil
		}
		p.up = upsert(p.up, c.ID, now)
	}
	empty := len(p.all) == 0
	e.dirty.Store(true)
	e.mu.Unlock()
	if empty {
		vs.setEntry(app, nil)
	}
}

// upsert replaces the instance id in list (sorted by id) with i, inserts
// i, or removes the instance when i is nil. It modifies list, which the
// caller owns (a pending view, never a published one).
func upsert(list []*eureka.InstanceInfo, id string, i *eureka.InstanceInfo) []*eureka.InstanceInfo {
	pos, found := slices.BinarySearchFunc(list, id, byID)
	switch {
	case found && i != nil:
		list[pos] = i
	case found:
		list = slices.Delete(list, pos, pos+1)
	case i != nil:
		list = slices.Insert(list, pos, i)
	}
	if len(list) == 0 {
		return nil
	}
	return list
}

func byID(e *eureka.InstanceInfo, id string) int { return strings.Compare(e.ID(), id) }

// Instances returns the UP instances of app (upper case), sorted by id. The
// slice and the instances are shared and must not be modified. It takes no
// lock and does not allocate, so a gateway can call it per request; a
// registration is visible to the very next call.
func (s *Store) Instances(app string) []*eureka.InstanceInfo {
	if e := s.views.entry(app); e != nil {
		return e.view().up
	}
	return nil
}

// AllInstances returns every instance of app, whatever its status, sorted by
// id. The slice is shared and must not be modified.
func (s *Store) AllInstances(app string) []*eureka.InstanceInfo {
	if e := s.views.entry(app); e != nil {
		return e.view().all
	}
	return nil
}
