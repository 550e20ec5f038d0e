package discovery

import (
	"maps"
	"sort"
	"strings"
	"sync"

	"github.com/eurekagate/eurekagate/eureka"
)

// snapshot is an immutable view of the local registry. A new one replaces it
// after each fetch that changed something.
type snapshot struct {
	apps map[string]*appInstances // the local region's
	// remote is the remote regions' apps, by region; nil without them.
	remote  map[string]map[string]*appInstances
	version int64  // versions__delta of the last fetch
	hash    string // apps__hashcode of the last fetch, over every region
	// ownHash renders the document with the hash of its own instances:
	// with remote regions, the server's covers theirs too.
	ownHash bool

	docOnce sync.Once
	doc     *eureka.Applications
}

// appInstances is one application's instances: every status, and the UP
// ones, both sorted by id.
type appInstances struct {
	all []*eureka.InstanceInfo
	up  []*eureka.InstanceInfo
}

func newAppInstances(byID map[string]*eureka.InstanceInfo) *appInstances {
	a := &appInstances{all: make([]*eureka.InstanceInfo, 0, len(byID))}
	for _, i := range byID {
		a.all = append(a.all, i)
	}
	eureka.SortInstances(a.all)
	for _, i := range a.all {
		if i.Status == eureka.StatusUp {
			a.up = append(a.up, i)
		}
	}
	return a
}

// applications renders the snapshot as a document, once.
func (s *snapshot) applications() *eureka.Applications {
	s.docOnce.Do(func() {
		doc := &eureka.Applications{VersionsDelta: s.version, AppsHashcode: s.hash}
		var counts eureka.StatusCounts
		names := make([]string, 0, len(s.apps))
		for name := range s.apps {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			doc.Applications = append(doc.Applications, &eureka.Application{Name: name, Instances: s.apps[name].all})
			for _, i := range s.apps[name].all {
				counts.Add(i.Status)
			}
		}
		if s.ownHash {
			doc.AppsHashcode = counts.Hash()
		}
		s.doc = doc
	})
	return s.doc
}

// apps is a region's registry: app -> id -> instance.
type apps map[string]map[string]*eureka.InstanceInfo

// cache is the local registry: the mutable copy that only the fetch loop
// touches, and the snapshot it publishes for readers.
type cache struct {
	place  *placement
	local  apps
	remote map[string]apps // by region; nil without remote regions
	// counts is over every region, as the server's reconcile hash is.
	counts eureka.StatusCounts
	last   *snapshot
}

// newCache returns an empty cache that places instances with place (nil:
// all in the local region).
func newCache(place *placement) *cache {
	return &cache{place: place, local: apps{},
		last: &snapshot{apps: map[string]*appInstances{}, version: -1, ownHash: place != nil}}
}

// empty reports whether the cache holds no instance in any region.
func (c *cache) empty() bool { return len(c.local) == 0 && len(c.remote) == 0 }

// replace loads a full fetch and returns the snapshot to publish.
func (c *cache) replace(doc *eureka.Applications) *snapshot {
	c.local = apps{}
	c.remote = nil
	c.counts = eureka.StatusCounts{}
	for _, a := range doc.Applications {
		for _, i := range a.Instances {
			c.upsert(c.place.region(i), appName(a, i), i)
		}
	}
	s := &snapshot{apps: c.local.snapshot(), version: doc.VersionsDelta, hash: doc.AppsHashcode, ownHash: c.place != nil}
	if len(c.remote) > 0 {
		s.remote = make(map[string]map[string]*appInstances, len(c.remote))
		for region, r := range c.remote {
			s.remote[region] = r.snapshot()
		}
	}
	c.last = s
	return s
}

// applyDelta merges a delta by instance id: ADDED and MODIFIED are upserts,
// DELETED a removal; instances without an action are ignored. Each
// instance goes to the region its record places it in, as Java's client
// does: ids are only unique within a region's registry. An instance that
// moved to another region is then held in both until the hash check, which
// counts it twice, makes a full fetch. It returns the snapshot to publish
// and whether the registry's reconcile hash matches the delta's, which is
// the hash of the server's full registry. Only the apps that changed are
// rebuilt.
func (c *cache) applyDelta(delta *eureka.Applications) (*snapshot, bool) {
	changed := map[string]map[string]bool{} // region ("" local) -> app
	for _, a := range delta.Applications {
		for _, i := range a.Instances {
			region, name := c.place.region(i), appName(a, i)
			switch i.ActionType {
			case eureka.ActionAdded, eureka.ActionModified:
				c.upsert(region, name, i)
			case eureka.ActionDeleted:
				if !c.remove(region, name, i.ID()) {
					continue
				}
			default:
				continue
			}
			if changed[region] == nil {
				changed[region] = map[string]bool{}
			}
			changed[region][name] = true
		}
	}
	last := c.last
	s := &snapshot{apps: last.apps, remote: last.remote, version: delta.VersionsDelta, hash: delta.AppsHashcode, ownHash: c.place != nil}
	cloned := false // s.remote is a copy of last's
	for region, names := range changed {
		if region == "" {
			s.apps = rebuild(last.apps, c.local, names)
			continue
		}
		if !cloned {
			s.remote = make(map[string]map[string]*appInstances, len(last.remote)+1)
			maps.Copy(s.remote, last.remote)
			cloned = true
		}
		if a := rebuild(last.remote[region], c.remote[region], names); len(a) > 0 {
			s.remote[region] = a
		} else {
			delete(s.remote, region)
		}
	}
	c.last = s
	return s, c.counts.Hash() == delta.AppsHashcode
}

// rebuild returns old with the apps named in changed rebuilt from cur (and
// dropped when they have no instance left).
func rebuild(old map[string]*appInstances, cur apps, changed map[string]bool) map[string]*appInstances {
	out := make(map[string]*appInstances, len(old)+len(changed))
	for name, a := range old {
		if !changed[name] {
			out[name] = a
		}
	}
	for name := range changed {
		if byID := cur[name]; len(byID) > 0 {
			out[name] = newAppInstances(byID)
		}
	}
	return out
}

// snapshot renders r's apps for a snapshot.
func (r apps) snapshot() map[string]*appInstances {
	out := make(map[string]*appInstances, len(r))
	for name, byID := range r {
		out[name] = newAppInstances(byID)
	}
	return out
}

// region returns the registry of region ("" local), creating it.
func (c *cache) region(region string) apps {
	if region == "" {
		return c.local
	}
	r := c.remote[region]
	if r == nil {
		if c.remote == nil {
			c.remote = map[string]apps{}
		}
		r = apps{}
		c.remote[region] = r
	}
	return r
}

func (c *cache) upsert(region, app string, i *eureka.InstanceInfo) {
	r := c.region(region)
	byID := r[app]
	if byID == nil {
		byID = map[string]*eureka.InstanceInfo{}
		r[app] = byID
	}
	id := i.ID()
	if old := byID[id]; old != nil {
		c.counts[old.Status]--
	}
	byID[id] = i
	c.counts.Add(i.Status)
}

func (c *cache) remove(region, app, id string) bool {
	r := c.local
	if region != "" {
		r = c.remote[region]
	}
	byID := r[app]
	old := byID[id]
	if old == nil {
		return false
	}
	c.counts[old.Status]--
	delete(byID, id)
	if len(byID) == 0 {
		delete(r, app)
		if region != "" && len(r) == 0 {
			delete(c.remote, region)
		}
	}
	return true
}

// appName is the instance's app, falling back to the application's name.
func appName(a *eureka.Application, i *eureka.InstanceInfo) string {
	if i.App != "" {
		return strings.ToUpper(i.App)
	}
	return strings.ToUpper(a.Name)
}
