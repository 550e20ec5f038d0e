package registry

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry/document"
)

// Reads that ask for remote regions (regions=a,b): the local registry with
// the regions' whitelisted instances merged in per application, and a
// reconcile hash over all of it, as Eureka's
// getApplicationsFromMultipleRegions. They are rarer than local reads, so
// they are built whole (not from per-app pieces) and cached per set of
// regions until the registry or a region moves, in one form, as the full
// registry is kept: compressed only unless a client reads that format
// plain (wholePayload). Kept plain and gzipped, one JSON and one XML read
// held four copies of the merged registry.

// FullPayloadIn is Documents.Full with the instances of regions (from
// ParseRegions) merged in; with no regions it is Documents.Full.
func (s *Store) FullPayloadIn(regions []string, f eureka.Format) *document.Payload {
	if len(regions) == 0 {
		return s.Documents().Full(f)
	}
	s.counters.fullFetches.Add(1)
	return s.regionPayload(namedKey{kindRegions, strings.Join(regions, ","), f}, regions)
}

// DeltaPayloadIn is Documents.Delta with the changes of regions (from
// ParseRegions) in the DeltaRetention appended per application, and the
// hash of the local registry with those regions; with no regions it is
// Documents.Delta.
func (s *Store) DeltaPayloadIn(regions []string, f eureka.Format) *document.Payload {
	if len(regions) == 0 {
		return s.Documents().Delta(f)
	}
	s.counters.deltaFetches.Add(1)
	return s.regionPayload(namedKey{kindRegionsDelta, strings.Join(regions, ","), f}, regions)
}

// regionPayload returns the document of key k (kindRegions or
// kindRegionsDelta) over regions, built again only when the registry or
// a region moved; one build at a time.
func (s *Store) regionPayload(k namedKey, regions []string) *document.Payload {
	c := &s.payloads
	delta := k.kind == kindRegionsDelta
	fresh := func(p *document.Payload) bool {
		return s.current(p, s.version.Load(), s.nowMillis()) && p.RegionVersion() == s.regions.version.Load() &&
			(!delta || p.Purges() == s.changes.purged.Load()+s.regions.purges.Load())
	}
	if p := c.namedPayload(k); fresh(p) {
		return p
	}
	s.regions.build.Lock()
	defer s.regions.build.Unlock()
	if p := c.namedPayload(k); fresh(p) {
		return p
	}
	var doc *eureka.Applications
	var version, purges uint64
	var counts eureka.StatusCounts
	now := s.nowMillis()
	s.mu.RLock()
	version = s.version.Load()
	if delta {
		purges = s.changes.purged.Load()
		doc = s.deltaLocked(s.payloads.deltaCounter.Add(1))
		counts = s.counts
	} else {
		doc = s.snapshotLocked(func(*eureka.InstanceInfo) bool { return true }, 1)
	}
	s.mu.RUnlock()
	rs := &s.regions
	rs.mu.Lock()
	rversion := rs.version.Load()
	purges += rs.purges.Load()
	if delta {
		doc.Applications = mergeApps(doc.Applications, rs.changesLocked(0, regions, nil), false)
		addCounts(&counts, rs.countsLocked(regions, nil))
		doc.AppsHashcode = counts.Hash()
	} else {
		doc.Applications = mergeApps(doc.Applications, rs.instancesLocked(regions), true)
		doc.AppsHashcode = eureka.ReconcileHash(doc.Applications)
	}
	rs.mu.Unlock()
	var buf []byte
	if last := c.namedPayload(k); last != nil {
		// As large as the last build: a document of tens of megabytes
		// grown by doubling would hold twice its size while it is built.
		buf = make([]byte, 0, last.Len()+last.Len()/16)
	}
	p := s.wholePayload(k.format, version, now, eureka.AppendApplications(buf, k.format, doc))
	p.SetRegionVersion(rversion)
	p.SetDelta(purges, 0)
	c.putNamed(k, p)
	return p
}

// changesLocked returns the retained changes of regions (of apps, if
// any) after version since, as delta entries: each instance once, in its
// latest state, per application in first-seen order. The caller holds
// rs.mu.
func (rs *regionSet) changesLocked(since uint64, regions, apps []string) []*eureka.Application {
	if since < rs.base {
		since = rs.base
	}
	var out []*eureka.Application
	index := map[string]int{}
	seen := map[string][2]int{}
	inRegions, inApps := nameSet(regions), nameSet(apps)
	for n := int(since - rs.base); n < len(rs.log); n++ {
		c := &rs.log[n]
		if !inRegions.has(c.Region) || !rs.byName[c.Region].allows(c.App) || (len(inApps) > 0 && !inApps.has(c.App)) {
			continue
		}
		key := c.Region + "\x00" + c.App + "\x00" + c.ID
		if p, ok := seen[key]; ok {
			out[p[0]].Instances[p[1]] = c.Instance
			continue
		}
		ai, ok := index[c.App]
		if !ok {
			ai = len(out)
			index[c.App] = ai
			out = append(out, &eureka.Application{Name: c.App})
		}
		seen[key] = [2]int{ai, len(out[ai].Instances)}
		out[ai].Instances = append(out[ai].Instances, c.Instance)
	}
	return out
}

// instancesLocked returns the whitelisted applications of regions, in
// region order. The caller holds rs.mu.
func (rs *regionSet) instancesLocked(regions []string) []*eureka.Application {
	var out []*eureka.Application
	for _, name := range regions {
		r := rs.byName[name]
		for app, a := range r.snap.Load().apps {
			if r.allows(app) && len(a.all) > 0 {
				out = append(out, &eureka.Application{Name: app, Instances: a.all})
			}
		}
	}
	return out
}

// countsLocked counts the whitelisted instances of regions (of apps, if
// any) by status, for the reconcile hash. The caller holds rs.mu.
func (rs *regionSet) countsLocked(regions, apps []string) eureka.StatusCounts {
	var counts eureka.StatusCounts
	inApps := nameSet(apps)
	for _, name := range regions {
		r := rs.byName[name]
		for app, a := range r.snap.Load().apps {
			if r.allows(app) && (len(inApps) == 0 || inApps.has(app)) {
				addCounts(&counts, a.counts)
			}
		}
	}
	return counts
}

func addCounts(to *eureka.StatusCounts, c eureka.StatusCounts) {
	for st, n := range c {
		to[st] += n
	}
}

// mergeApps adds more's instances to the applications of the same name in
// apps (new ones appended); sorted sorts the result by name and id, as
// full documents are, else first-seen order is kept, as deltas are.
func mergeApps(apps, more []*eureka.Application, sorted bool) []*eureka.Application {
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

// RemoteAppPayload is GET /apps/{app}'s transparent fallback: the first
// remote region (in configured order) that holds app answers for it, as
// Eureka's getApplication(app, true), whatever the whitelists. false when
// none does or DisableTransparentFallback is set.
func (s *Store) RemoteAppPayload(app string, f eureka.Format) (*document.Payload, bool) {
	if s.cfg.DisableTransparentFallback {
		return nil, false
	}
	for _, r := range s.regions.order {
		if a := r.snap.Load().apps[app]; a != nil && len(a.all) > 0 {
			p := document.New(s.version.Load(), s.nowMillis(),
				eureka.AppendApplication(nil, f, &eureka.Application{Name: app, Instances: a.all}))
			return p, true
		}
	}
	return nil, false
}

// RegionsToken renders the versions a read with regions reflects, the
// local one and the remote regions', "<epoch>.<v>.<remote>": a watch with
// regions resumes from both.
func (s *Store) RegionsToken(v, remote uint64) string {
	return s.VersionToken(v) + "." + strconv.FormatUint(remote, 10)
}

// ParseRegionsToken reads a RegionsToken; ok is false for any other token
// (a plain VersionToken too: a reader that now asks for regions must read
// them whole first).
func (s *Store) ParseRegionsToken(t string) (v, remote uint64, ok bool) {
	i := strings.LastIndexByte(t, '.')
	if i < 0 {
		return 0, 0, false
	}
	v, ok = s.ParseVersionToken(t[:i])
	if !ok || strings.Count(t[:i], ".") != 1 {
		return 0, 0, false
	}
	remote, err := strconv.ParseUint(t[i+1:], 10, 64)
	return v, remote, err == nil
}

// pollRegions is Poll's part for remote regions: their changes after
// p.SinceRegions (of p.Apps), and their counts for the hash, read at one
// instant. ok is false when p.SinceRegions is no longer retained.
func (s *Store) pollRegions(p Poll) (version uint64, changes []*eureka.Application, counts eureka.StatusCounts, ok bool) {
	rs := &s.regions
	rs.mu.Lock()
	defer rs.mu.Unlock()
	version = rs.version.Load()
	if p.SinceRegions > version || p.SinceRegions < rs.base {
		return version, nil, counts, false
	}
	return version, rs.changesLocked(p.SinceRegions, p.Regions, p.Apps), rs.countsLocked(p.Regions, p.Apps), true
}

// waitRegions waits until the local registry has a change after since or
// the remote regions one after sinceRegions, or ctx ends.
func (s *Store) waitRegions(ctx context.Context, since, sinceRegions uint64) {
	for {
		wake, rwake := *s.stream.wake.Load(), *s.regions.wake.Load()
		if s.stream.delivered.Load() > since || s.regions.version.Load() > sinceRegions {
			return
		}
		select {
		case <-wake:
		case <-rwake:
		case <-ctx.Done():
			return
		}
	}
}

// ApplicationsOfIn is ApplicationsOf with the instances of regions (from
// ParseRegions) among the named applications merged in, with the remote
// regions' version too.
func (s *Store) ApplicationsOfIn(apps, regions []string) (*eureka.Applications, uint64, uint64) {
	doc, version := s.ApplicationsOf(apps)
	rs := &s.regions
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var more []*eureka.Application
	inApps := nameSet(apps)
	for _, a := range rs.instancesLocked(regions) {
		if inApps.has(a.Name) {
			more = append(more, a)
		}
	}
	doc.Applications = mergeApps(doc.Applications, more, true)
	doc.AppsHashcode = eureka.ReconcileHash(doc.Applications)
	return doc, version, rs.version.Load()
}
