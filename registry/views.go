package registry

import (
	"sync"

	"github.com/eurekagate/eurekagate/eureka"
)

// appView is an immutable list of one application's instances, published
// after each change to the app so that routing reads it without locks.
type appView struct {
	all []*eureka.InstanceInfo // every status, sorted by id
	up  []*eureka.InstanceInfo // the UP ones, same order
}

// views maps app name to *appView.
type views struct{ m sync.Map }

// publishLocked rebuilds app's view from its leases. The caller holds the
// write lock.
func (s *Store) publishLocked(app string) {
	a := s.apps[app]
	if a == nil || len(a.leases) == 0 {
		s.views.m.Delete(app)
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
	s.views.m.Store(app, v)
}

// Instances returns the UP instances of app (upper case), sorted by id. The
// slice and the instances are shared and must not be modified. It takes no
// lock and does not allocate, so a gateway can call it per request; a
// registration is visible to the very next call.
func (s *Store) Instances(app string) []*eureka.InstanceInfo {
	if v, ok := s.views.m.Load(app); ok {
		return v.(*appView).up
	}
	return nil
}

// AllInstances returns every instance of app, whatever its status, sorted by
// id. The slice is shared and must not be modified.
func (s *Store) AllInstances(app string) []*eureka.InstanceInfo {
	if v, ok := s.views.m.Load(app); ok {
		return v.(*appView).all
	}
	return nil
}
