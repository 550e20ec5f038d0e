package registry

import (
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
type views struct {
	shards [viewShards]atomic.Pointer[map[string]*viewEntry]
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
// or removed. The caller holds the Store's write lock.
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

// publishLocked rebuilds app's view from its leases. The caller holds the
// write lock.
func (s *Store) publishLocked(app string) {
	a := s.apps[app]
	if a == nil || len(a.leases) == 0 {
		if s.views.entry(app) != nil {
			s.views.setEntry(app, nil)
		}
		return
	}
	v := &appView{all: make([]*eureka.InstanceInfo, 0, len(a.leases))}
	for _, l := range a.leases {
		v.all = append(v.all, l.info)
	}
	eureka.SortInstances(v.all)
	for _, i := range v.all {
		if i.Status == eureka.StatusUp {
			v.up = append(v.up, i)
		}
	}
	e := s.views.entry(app)
	if e == nil {
		e = &viewEntry{}
		e.v.Store(v)
		s.views.setEntry(app, e)
		return
	}
	e.v.Store(v)
}

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
