package regions

import (
	"slices"
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/document"
)

// Reads with remote regions (regions=a,b): the local registry with the
// regions' whitelisted instances merged in per application, and a
// reconcile hash over all of it, as Eureka's
// getApplicationsFromMultipleRegions.

// Parse reads a read's regions parameter as Eureka does (lower case,
// comma-separated, sorted) and keeps the configured regions among them,
// sorted and without repeats; regions this Store does not serve are
// ignored, as Eureka ignores them. The error is a
// *registry.ListTooLongError for a list over registry.MaxQueryListBytes
// or MaxQueryListNames (the same bounds as apps=), and ErrRegionNotReady
// when one of them has not been read yet.
func (m *Mirror) Parse(param string) ([]string, error) {
	out, err := registry.ParseRegionList(param, func(name string) bool { return m.byName[name] != nil })
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, name := range out {
		if !m.byName[name].ready {
			return out, ErrRegionNotReady
		}
	}
	return out, nil
}

// InstancesIn returns the UP instances of app in region, sorted by id:
// the Store's own (registry.Store.Instances) for its region or "", a
// remote region's copy (within its whitelist) for a remote one, nil for
// any other. It takes no lock.
func (m *Mirror) InstancesIn(app, region string) []*eureka.InstanceInfo {
	if region == "" || strings.EqualFold(region, m.cfg.Region) {
		return m.store.Instances(app)
	}
	r := m.byName[strings.ToLower(region)]
	if r == nil || !r.allows(app) {
		return nil
	}
	if a := r.snap.Load().apps[app]; a != nil {
		return a.up
	}
	return nil
}

// AppPayload is GET /apps/{app}'s transparent fallback: the first remote
// region (in configured order) that holds app answers for it, as Eureka's
// getApplication(app, true), whatever the whitelists. false when none
// does or DisableTransparentFallback is set.
func (m *Mirror) AppPayload(app string, f eureka.Format) (*document.Payload, bool) {
	if m.cfg.DisableTransparentFallback {
		return nil, false
	}
	for _, r := range m.order {
		if a := r.snap.Load().apps[app]; a != nil && len(a.all) > 0 {
			p := document.New(m.store.Version(), m.cfg.Clock.Now().UnixMilli(),
				eureka.AppendApplication(nil, f, &eureka.Application{Name: app, Instances: a.all}))
			return p, true
		}
	}
	return nil, false
}

// Payload is the one snapshot of the local registry with the regions
// names (from Parse, not none): the full registry, or with delta the delta
// with the regions' retained changes appended per application, in format
// f, with the hash of all it holds (registry.Store.MergedPayload).
func (m *Mirror) Payload(names []string, delta bool, f eureka.Format) *document.Payload {
	return m.store.MergedPayload(m, names, delta, f)
}

// ApplicationsOf is registry.Store.ApplicationsOf with the instances of
// the regions names among the named applications merged in, and the
// version it reflects.
func (m *Mirror) ApplicationsOf(apps, names []string) (*eureka.Applications, registry.Version) {
	doc, local := m.store.ApplicationsOf(apps)
	apps = sorted(apps)
	m.mu.Lock()
	defer m.mu.Unlock()
	var more []*eureka.Application
	for _, a := range m.instancesLocked(names) {
		if has(apps, a.Name) {
			more = append(more, a)
		}
	}
	doc.Applications = MergeApps(doc.Applications, more, true)
	doc.AppsHashcode = eureka.ReconcileHash(doc.Applications)
	return doc, registry.Version{Local: local, Remote: m.version.Load(), Regions: true}
}

var _ registry.Remote = (*Mirror)(nil)

// Versions is registry.Remote's: the regions' version and purges.
func (m *Mirror) Versions() (version, purges uint64) {
	return m.version.Load(), m.purges.Load()
}

// Merge is registry.Remote's: the instances of the regions names (or, for
// a delta, their retained changes) merged into doc.
func (m *Mirror) Merge(names []string, doc *eureka.Applications, counts *eureka.StatusCounts, delta bool) (version, purges uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if delta {
		doc.Applications = MergeApps(doc.Applications, m.changesLocked(names, 0, nil), false)
		registry.AddCounts(counts, m.countsLocked(names, nil))
	} else {
		doc.Applications = MergeApps(doc.Applications, m.instancesLocked(names), true)
	}
	return m.version.Load(), m.purges.Load()
}

// ChangesAfter is registry.Remote's, the one changes-after call: the
// changes of the regions names after since (of apps), and their counts for
// the hash, read at one instant; false when since is no longer retained.
func (m *Mirror) ChangesAfter(names []string, since uint64, apps []string) (registry.RemoteChanges, bool) {
	wake := *m.wake.Load() // before the version: a later change closes it
	m.mu.Lock()
	defer m.mu.Unlock()
	out := registry.RemoteChanges{Version: m.version.Load(), Wake: wake}
	if since > out.Version || since < m.base {
		return out, false
	}
	apps = sorted(apps)
	out.Apps, out.Counts = m.changesLocked(names, since, apps), m.countsLocked(names, apps)
	return out, true
}

// changesLocked returns the retained changes of the regions names (of
// apps, sorted, if any) after version since, as delta entries: each
// instance once, in its latest state, per application in first-seen
// order. The caller holds m.mu.
func (m *Mirror) changesLocked(names []string, since uint64, apps []string) []*eureka.Application {
	names = sorted(names)
	since = max(since, m.base)
	return registry.GroupChanges(m.log[since-m.base:], func(_ int, c *Change) (string, string, *eureka.InstanceInfo) {
		if !has(names, c.Region) || !m.byName[c.Region].allows(c.App) || (len(apps) > 0 && !has(apps, c.App)) {
			return "", "", nil
		}
		return c.App, c.Region + "\x00" + c.App + "\x00" + c.ID, c.Instance
	})
}

// instancesLocked returns the whitelisted applications of the regions
// names, in their order. The caller holds m.mu.
func (m *Mirror) instancesLocked(names []string) []*eureka.Application {
	var out []*eureka.Application
	for _, name := range names {
		r := m.byName[name]
		for app, a := range r.snap.Load().apps {
			if r.allows(app) && len(a.all) > 0 {
				out = append(out, &eureka.Application{Name: app, Instances: a.all})
			}
		}
	}
	return out
}

// countsLocked counts the whitelisted instances of the regions names (of
// apps, sorted, if any) by status, for the reconcile hash. The caller
// holds m.mu.
func (m *Mirror) countsLocked(names, apps []string) eureka.StatusCounts {
	var counts eureka.StatusCounts
	for _, name := range names {
		r := m.byName[name]
		for app, a := range r.snap.Load().apps {
			if r.allows(app) && (len(apps) == 0 || has(apps, app)) {
				registry.AddCounts(&counts, a.counts)
			}
		}
	}
	return counts
}

// sorted returns names sorted: names itself when it is already, as Parse
// and registry.Interest give their lists, so that a long poll that wakes
// often allocates nothing for it.
func sorted(names []string) []string {
	if slices.IsSorted(names) {
		return names
	}
	return slices.Sorted(slices.Values(names))
}

// has reports whether name is in names, sorted.
func has(names []string, name string) bool {
	_, ok := slices.BinarySearch(names, name)
	return ok
}

// MergeApps adds more's instances to the applications of the same name in
// apps (new ones appended); sorted sorts the result by name and id, as
// full documents are, else first-seen order is kept, as deltas are, and
// as Eureka appends remote deltas.
func MergeApps(apps, more []*eureka.Application, sorted bool) []*eureka.Application {
	if len(more) == 0 {
		return apps
	}
	index := make(map[string]int, len(apps))
	for n, a := range apps {
		index[a.Name] = n
	}
	for _, m := range more {
		if n, ok := index[m.Name]; ok {
			apps[n] = &eureka.Application{Name: m.Name, Instances: append(slices.Clip(apps[n].Instances), m.Instances...)}
			continue
		}
		index[m.Name] = len(apps)
		apps = append(apps, &eureka.Application{Name: m.Name, Instances: slices.Clone(m.Instances)})
	}
	if sorted {
		eureka.SortByName(apps)
	}
	return apps
}
