package registry

import (
	"slices"
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
)

// Delta documents: the change log rendered as Eureka's delta (delta,
// Documents.Delta), and a watcher's changes rendered the same way
// (ChangesDocument).

// deltaLocked renders the change log whole: each changed instance once,
// in its state at its latest change (deltaInstance), apps sorted by name
// and each one's instances in the order of their latest changes, with
// the hash of the full registry. Documents.Delta assembles the same
// document from pieces (registry/document's Delta). The caller holds s.mu.
func (s *Store) deltaLocked(versionsDelta int64) *eureka.Applications {
	type key struct{ app, id string }
	entries := s.changes.entries
	latest := make(map[key]int, len(entries))
	for n := range entries {
		latest[key{entries[n].App, entries[n].ID}] = n
	}
	// Only each instance's latest change is rendered, so that the
	// instances come in the order of their latest changes.
	values := make([]eureka.InstanceInfo, len(entries))
	apps := GroupChanges(entries, func(n int, c *Change) (string, string, *eureka.InstanceInfo) {
		if latest[key{c.App, c.ID}] != n {
			return "", "", nil
		}
		values[n] = s.deltaInstance(c)
		return c.App, c.App + "\x00" + c.ID, &values[n]
	})
	slices.SortFunc(apps, func(a, b *eureka.Application) int { return strings.Compare(a.Name, b.Name) })
	return &eureka.Applications{VersionsDelta: versionsDelta, AppsHashcode: s.hashLocked(), Applications: apps}
}

// deltaInstance is a change's instance as the delta shows it: with the
// lease's timestamps at the change.
func (s *Store) deltaInstance(c *Change) eureka.InstanceInfo {
	i := *c.Instance
	i.LeaseInfo = c.Lease
	i.IsCoordinatingDiscoveryServer = s.cfg.InstanceID != "" && i.ID() == s.cfg.InstanceID
	return i
}

// ChangesDocument renders changes (from Poll) as a delta document:
// each changed instance once, in its state at its last change, grouped by
// app in first-seen order, with the given versions__delta and hash.
func ChangesDocument(changes []Change, versionsDelta int64, hash string) *eureka.Applications {
	apps := GroupChanges(changes, func(_ int, c *Change) (string, string, *eureka.InstanceInfo) {
		return c.App, c.App + "\x00" + c.ID, c.Decorated()
	})
	return &eureka.Applications{VersionsDelta: versionsDelta, AppsHashcode: hash, Applications: apps}
}

// GroupChanges groups the instances render gives for changes by app, in
// first-seen order, each instance once: a later change of the instance
// render gives the same key (its app and id, and for a remote region its
// region) replaces it in place, as Eureka's delta shows each changed lease
// once. A change render gives no instance for (nil) is left out. The local
// change log and the remote regions' (registry/regions) are grouped by it.
func GroupChanges[C any](changes []C, render func(n int, c *C) (app, key string, i *eureka.InstanceInfo)) []*eureka.Application {
	type pos struct{ app, inst int }
	var apps []*eureka.Application
	appIndex := map[string]int{}
	seen := map[string]pos{}
	for n := range changes {
		name, key, i := render(n, &changes[n])
		if i == nil {
			continue
		}
		ai, ok := appIndex[name]
		if !ok {
			ai = len(apps)
			appIndex[name] = ai
			apps = append(apps, &eureka.Application{Name: name})
		}
		app := apps[ai]
		if p, ok := seen[key]; ok {
			app.Instances[p.inst] = i
			continue
		}
		seen[key] = pos{ai, len(app.Instances)}
		app.Instances = append(app.Instances, i)
	}
	return apps
}

// delta returns the changes of the last DeltaRetention as a delta document.
func (s *Store) delta() *eureka.Applications {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.deltaLocked(s.payloads.deltaCounter.Load())
}
