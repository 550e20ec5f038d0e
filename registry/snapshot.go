package registry

import (
	"sort"

	"github.com/eurekagate/eurekagate/eureka"
)

// snapshotLocked renders the registry (the instances keep accepts) as an
// Applications document, apps sorted by name and instances by id, with the
// reconcile hash of what it holds. The caller holds s.mu.
func (s *Store) snapshotLocked(keep func(*eureka.InstanceInfo) bool, versionsDelta int64) *eureka.Applications {
	names := make([]string, 0, len(s.apps))
	for name := range s.apps {
		names = append(names, name)
	}
	sort.Strings(names)
	out := &eureka.Applications{VersionsDelta: versionsDelta, Applications: make([]*eureka.Application, 0, len(names))}
	for _, name := range names {
		if a := s.appSnapshotLocked(name, s.apps[name], keep); len(a.Instances) > 0 {
			out.Applications = append(out.Applications, a)
		}
	}
	out.AppsHashcode = eureka.ReconcileHash(out.Applications)
	return out
}

// appSnapshotLocked renders one application. The decorated copies live in
// one slice, so a snapshot costs one allocation per app for its instances.
func (s *Store) appSnapshotLocked(name string, a *appLeases, keep func(*eureka.InstanceInfo) bool) *eureka.Application {
	values := make([]eureka.InstanceInfo, 0, len(a.leases))
	for _, l := range a.leases {
		if keep(l.info) {
			values = append(values, s.decorate(l))
		}
	}
	list := make([]*eureka.InstanceInfo, len(values))
	for n := range values {
		list[n] = &values[n]
	}
	eureka.SortInstances(list)
	return &eureka.Application{Name: name, Instances: list}
}

// hashLocked is the reconcile hash of the whole registry, from the status
// counts the writes keep.
func (s *Store) hashLocked() string { return s.counts.Hash() }

// ApplicationsOf returns the named applications (those that have
// instances), sorted, with the registry's version and their reconcile hash,
// read at one instant: the full fetch of a client that watches only them.
func (s *Store) ApplicationsOf(apps []string) (*eureka.Applications, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := &eureka.Applications{VersionsDelta: 1}
	var counts eureka.StatusCounts
	for _, name := range apps {
		a := s.apps[name]
		if a == nil || len(a.leases) == 0 {
			continue
		}
		out.Applications = append(out.Applications, s.appSnapshotLocked(name, a, func(*eureka.InstanceInfo) bool { return true }))
		for st, n := range a.counts {
			counts[st] += n
		}
	}
	out.AppsHashcode = counts.Hash()
	return out, s.version.Load()
}
