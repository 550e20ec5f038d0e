package discovery

import (
	"sort"
	"strings"
	"sync"

	"github.com/eurekagate/eurekagate/eureka"
)

// snapshot is an immutable view of the local registry. A new one replaces it
// after each fetch that changed something.
type snapshot struct {
	apps    map[string]*appInstances
	version int64 // versions__delta of the last fetch
	hash    string

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
		names := make([]string, 0, len(s.apps))
		for name := range s.apps {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			doc.Applications = append(doc.Applications, &eureka.Application{Name: name, Instances: s.apps[name].all})
		}
		s.doc = doc
	})
	return s.doc
}

// cache is the local registry: the mutable copy that only the fetch loop
// touches, and the snapshot it publishes for readers.
type cache struct {
	local  map[string]map[string]*eureka.InstanceInfo // app -> id -> instance
	counts eureka.StatusCounts
	last   *snapshot
}

func newCache() *cache {
	return &cache{local: map[string]map[string]*eureka.InstanceInfo{}, last: &snapshot{apps: map[string]*appInstances{}, version: -1}}
}

// replace loads a full fetch and returns the snapshot to publish.
func (c *cache) replace(doc *eureka.Applications) *snapshot {
	c.local = map[string]map[string]*eureka.InstanceInfo{}
	c.counts = eureka.StatusCounts{}
	for _, a := range doc.Applications {
		for _, i := range a.Instances {
			c.upsert(appName(a, i), i)
		}
	}
	s := &snapshot{apps: make(map[string]*appInstances, len(c.local)), version: doc.VersionsDelta, hash: doc.AppsHashcode}
	for name, byID := range c.local {
		s.apps[name] = newAppInstances(byID)
	}
	c.last = s
	return s
}

// applyDelta merges a delta by instance id: ADDED and MODIFIED are upserts,
// DELETED a removal; instances without an action are ignored. It returns
// the snapshot to publish and whether the local registry's reconcile hash
// matches the delta's, which is the hash of the server's full registry.
func (c *cache) applyDelta(delta *eureka.Applications) (*snapshot, bool) {
	changed := map[string]bool{}
	for _, a := range delta.Applications {
		for _, i := range a.Instances {
			name := appName(a, i)
			switch i.ActionType {
			case eureka.ActionAdded, eureka.ActionModified:
				c.upsert(name, i)
				changed[name] = true
			case eureka.ActionDeleted:
				if c.remove(name, i.ID()) {
					changed[name] = true
				}
			}
		}
	}
	s := &snapshot{apps: c.last.apps, version: delta.VersionsDelta, hash: delta.AppsHashcode}
	if len(changed) > 0 {
		s.apps = make(map[string]*appInstances, len(c.last.apps)+len(changed))
		for name, a := range c.last.apps {
			if !changed[name] {
				s.apps[name] = a
			}
		}
		for name := range changed {
			if byID := c.local[name]; len(byID) > 0 {
				s.apps[name] = newAppInstances(byID)
			}
		}
	}
	c.last = s
	return s, c.counts.Hash() == delta.AppsHashcode
}

func (c *cache) upsert(app string, i *eureka.InstanceInfo) {
	byID := c.local[app]
	if byID == nil {
		byID = map[string]*eureka.InstanceInfo{}
		c.local[app] = byID
	}
	id := i.ID()
	if old := byID[id]; old != nil {
		c.counts[old.Status]--
	}
	byID[id] = i
	c.counts.Add(i.Status)
}

func (c *cache) remove(app, id string) bool {
	byID := c.local[app]
	old := byID[id]
	if old == nil {
		return false
	}
	c.counts[old.Status]--
	delete(byID, id)
	if len(byID) == 0 {
		delete(c.local, app)
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
