package registry

import (
	"slices"
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
)

// Epoch identifies this Store: versions number one Store's changes, so a
// reader holding a version of another epoch (another node, or this process
// before a restart) must read the whole registry again. It is random,
// chosen when the Store is created, and never 0.
func (s *Store) Epoch() uint64 { return s.epoch }

// ChangesFor returns the registry's version, the changes after version
// since (only those of apps, if apps is not empty), and the reconcile hash
// of the registry (or of those apps) at that version, all read at one
// instant. ok is false when since is not a version this Store can answer
// for (older than the retained log, or newer than its current version):
// the reader must read the whole registry. The slice is shared and must not
// be modified.
func (s *Store) ChangesFor(since uint64, apps []string) (version uint64, changes []Change, hash string, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	version = s.version.Load()
	if since > version {
		return version, nil, "", false
	}
	all, ok := s.changes.after(since, version)
	if !ok {
		return version, nil, "", false
	}
	if len(apps) == 0 {
		return version, all, s.counts.Hash(), true
	}
	var counts eureka.StatusCounts
	for _, app := range apps {
		if a := s.apps[app]; a != nil {
			for st, n := range a.counts {
				counts[st] += n
			}
		}
	}
	for _, c := range all {
		if slices.Contains(apps, c.App) {
			changes = append(changes, c)
		}
	}
	return version, changes, counts.Hash(), true
}

// Interest parses a comma-separated list of application names, as the
// watch's apps parameter carries it, upper-cased, sorted, without blanks
// or repeats.
func Interest(list string) []string {
	var out []string
	for _, name := range strings.Split(list, ",") {
		if name = strings.ToUpper(strings.TrimSpace(name)); name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

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
