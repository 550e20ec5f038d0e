package registry

import (
	"slices"
	"strings"
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
// removes one instance by binary search, so its cost is one copy of the
// app's pointer slices, not a rebuild and re-sort of the app.
type views struct {
	shards [viewShards]atomic.Pointer[map[string]*viewEntry]
	vips   vipIndex
}

const viewShards = 64

type viewEntry struct{ v atomic.Pointer[appView] }

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

// applyApp applies one app's changes to a copy of its view and publishes
// the copy.
func (vs *views) applyApp(app string, changes []Change) {
	e := vs.entry(app)
	var all, up []*eureka.InstanceInfo
	if e != nil {
		cur := e.v.Load()
		all, up = slices.Clone(cur.all), slices.Clone(cur.up)
	}
	for n := range changes {
		c := &changes[n]
		var old, now *eureka.InstanceInfo
		if pos, found := slices.BinarySearchFunc(all, c.ID, byID); found {
			old = all[pos]
		}
		if !c.Kind.Removes() {
			now = c.Instance
		}
		vs.vips.update(app, old, now)
		all = upsert(all, c.ID, now)
		if now != nil && now.Status != eureka.StatusUp {
			now = nil
		}
		up = upsert(up, c.ID, now)
	}
	switch {
	case len(all) == 0:
		if e != nil {
			vs.setEntry(app, nil)
		}
	case e == nil:
		e = &viewEntry{}
		e.v.Store(&appView{all: all, up: up})
		vs.setEntry(app, e)
	default:
		e.v.Store(&appView{all: all, up: up})
	}
}

// upsert replaces the instance id in list (sorted by id) with i, inserts
// i, or removes the instance when i is nil. It modifies list, which the
// caller owns.
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
		return e.v.Load().up
	}
	return nil
}

// AllInstances returns every instance of app, whatever its status, sorted by
// id. The slice is shared and must not be modified.
func (s *Store) AllInstances(app string) []*eureka.InstanceInfo {
	if e := s.views.entry(app); e != nil {
		return e.v.Load().all
	}
	return nil
}
