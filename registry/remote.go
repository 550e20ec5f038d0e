package registry

import (
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
)

// The remote regions live in package registry/regions (their Mirror).
// The Store knows them only through what is here: the mirror it holds so
// that its retention loop ages it (HoldMirror), the reads merged with it
// that it caches beside its own documents (MergedPayload), and the remote
// part of a long poll (Poll.Remote).

// RemoteRegion is one remote region a Store serves.
type RemoteRegion struct {
	// Name is the region's name, matched without regard to case against a
	// read's regions parameter.
	Name string
	// AppWhitelist is the apps of this region that reads merge in
	// (eureka.server.remoteRegion.<name>.appWhiteList). Default: the
	// Store's RemoteRegionAppWhitelist, and without one every app.
	AppWhitelist []string
}

// Mirror is what the Store's retention loop does to the remote regions'
// copies it holds (HoldMirror).
type Mirror interface {
	// Purge drops the changes recorded before cutoff (ms), as PurgeDeltas
	// drops the local ones.
	Purge(cutoff int64)
	// DropStale drops the regions that stopped answering for longer than
	// RemoteRegionRetention.
	DropStale()
}

// HoldMirror returns the Mirror the Store holds, made by create on the
// first call: one per Store, aged by its retention loop from then on.
func (s *Store) HoldMirror(create func() Mirror) Mirror {
	s.mirrorMu.Lock()
	defer s.mirrorMu.Unlock()
	if m, ok := s.mirror.Load().(Mirror); ok {
		return m
	}
	m := create()
	s.mirror.Store(m)
	return m
}

// ageMirror runs the retention of the Mirror held, if any.
func (s *Store) ageMirror(cutoff int64) {
	if m, ok := s.mirror.Load().(Mirror); ok {
		m.Purge(cutoff)
		m.DropStale()
	}
}

// dropStaleRegions is the retention loop's own check for regions that
// stopped answering, more often than PurgeDeltas.
func (s *Store) dropStaleRegions() {
	if m, ok := s.mirror.Load().(Mirror); ok {
		m.DropStale()
	}
}

// Remote is the remote regions merged into a read or a long poll, each
// time a set of them by name (registry/regions.Mirror).
type Remote interface {
	// Versions returns the regions' version and how many times their
	// changes were purged: a document merged at other values is built
	// again.
	Versions() (version, purges uint64)
	// Merge merges the regions names into doc, read at one instant: their
	// instances per application (sorted as a full document is), or, for a
	// delta, their retained changes, adding their status counts to
	// counts. It returns the Versions merged.
	Merge(names []string, doc *eureka.Applications, counts *eureka.StatusCounts, delta bool) (version, purges uint64)
	// ChangesAfter returns the changes of the regions names after version
	// since (of apps, if any), read at one instant; false when since is
	// not a version they can answer for.
	ChangesAfter(names []string, since uint64, apps []string) (RemoteChanges, bool)
}

// RemoteChanges is the remote part of a long poll's answer.
type RemoteChanges struct {
	// Version is the regions' version the answer reflects.
	Version uint64
	// Apps are the changes after the version asked for, as delta entries
	// per application.
	Apps []*eureka.Application
	// Counts are the regions' instances (of the apps asked for) by
	// status, for the hash.
	Counts eureka.StatusCounts
	// Wake is closed at the regions' next change after Version.
	Wake <-chan struct{}
}

// ParseRegionList reads a read's regions parameter as Eureka does (lower
// case, comma-separated) and returns the names keep keeps, sorted and
// without repeats. A list over MaxQueryListBytes or MaxQueryListNames (the
// same bounds as apps=) is a *ListTooLongError.
func ParseRegionList(list string, keep func(string) bool) ([]string, error) {
	return parseList("regions", list, strings.ToLower, keep)
}

// AddCounts adds c to to.
func AddCounts(to *eureka.StatusCounts, c eureka.StatusCounts) {
	for st, n := range c {
		to[st] += n
	}
}
