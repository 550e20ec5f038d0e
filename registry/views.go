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

// apply brings the app's view up to date with one change.
func (vs *views) apply(c *Change) {
	e := vs.entry(c.App)
	var cur *appView
	if e != nil {
		cur = e.v.Load()
	} else {
		cur = &appView{}
	}
	var old, now *eureka.InstanceInfo
	if pos, found := slices.BinarySearchFunc(cur.all, c.ID, byID); found {
		old = cur.all[pos]
	}
	if !c.Kind.Removes() {
		now = c.Instance
	}
	vs.vips.update(c.App, old, now)
	next := &appView{
		all: withInstance(cur.all, c.ID, c.Instance, !c.Kind.Removes()),
		up:  withInstance(cur.up, c.ID, c.Instance, !c.Kind.Removes() && c.Instance.Status == eureka.StatusUp),
	}
	switch {
	case len(next.all) == 0:
		if e != nil {
			vs.setEntry(c.App, nil)
		}
	case e == nil:
		e = &viewEntry{}
		e.v.Store(next)
		vs.setEntry(c.App, e)
	default:
		e.v.Store(next)
	}
}

// withInstance returns a copy of list (sorted by id) with the instance id
// replaced by i, inserted, or removed (keep false). list is not modified.
func withInstance(list []*eureka.InstanceInfo, id string, i *eureka.InstanceInfo, keep bool) []*eureka.InstanceInfo {
	pos, found := slices.BinarySearchFunc(list, id, byID)
	switch {
	case found && keep:
		out := slices.Clone(list)
		out[pos] = i
		return out
	case found:
		if len(list) == 1 {
			return nil
		}
		out := make([]*eureka.InstanceInfo, 0, len(list)-1)
		return append(append(out, list[:pos]...), list[pos+1:]...)
	case keep:
		out := make([]*eureka.InstanceInfo, 0, len(list)+1)
		out = append(out, list[:pos]...)
		out = append(out, i)
		return append(out, list[pos:]...)
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
