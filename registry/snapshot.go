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

// deltaLocked renders the change log: each changed instance once, with its
// current state, grouped by app in first-seen order, and the hash of the
// full registry. The caller holds s.mu.
func (s *Store) deltaLocked(versionsDelta int64) *eureka.Applications {
	type pos struct{ app, inst int }
	out := &eureka.Applications{VersionsDelta: versionsDelta, AppsHashcode: s.hashLocked()}
	appIndex := map[string]int{}
	seen := map[string]pos{} // by app + "\x00" + id
	values := make([]eureka.InstanceInfo, len(s.changes.entries))
	for n, c := range s.changes.entries {
		values[n] = s.decorate(c.lease)
		i := &values[n]
		ai, ok := appIndex[i.App]
		if !ok {
			ai = len(out.Applications)
			appIndex[i.App] = ai
			out.Applications = append(out.Applications, &eureka.Application{Name: i.App})
		}
		app := out.Applications[ai]
		key := i.App + "\x00" + i.ID()
		if p, ok := seen[key]; ok {
			app.Instances[p.inst] = i
			continue
		}
		seen[key] = pos{ai, len(app.Instances)}
		app.Instances = append(app.Instances, i)
	}
	return out
}

// Delta returns the changes of the last DeltaRetention as a delta document.
func (s *Store) Delta() *eureka.Applications {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.deltaLocked(s.payloads.deltaCounter.Load())
}
