package registry

import (
	"github.com/eurekagate/eurekagate/eureka"
)

// ChangeKind says what a Change did to an instance.
type ChangeKind uint8

// The kinds of change. Each write that alters what a read returns records
// exactly one Change; a heartbeat that alters nothing records none.
const (
	// Registered: an instance registered or re-registered (ADDED in a
	// delta). Change.New tells whether the registry held it before.
	Registered ChangeKind = iota + 1
	// Renewed: a heartbeat made the status override rules change the
	// instance's status (MODIFIED). Plain heartbeats are not changes.
	Renewed
	// Cancelled: the instance cancelled its lease (DELETED).
	Cancelled
	// Evicted: the instance's lease expired and was evicted (DELETED).
	Evicted
	// StatusSet: a status override was set, PUT .../status (MODIFIED).
	StatusSet
	// OverrideDeleted: a status override was removed, DELETE .../status
	// (MODIFIED).
	OverrideDeleted
	// OverrideAdopted: a peer's status override was taken over, from a
	// replicated heartbeat or a peer's newer copy (the instance's
	// overriddenStatus changed).
	OverrideAdopted
	// MetadataUpdated: metadata was merged in, PUT .../metadata; Eureka
	// records it as a re-registration (ADDED).
	MetadataUpdated
)

var kindNames = [...]string{"", "registered", "renewed", "cancelled", "evicted", "status_set", "override_deleted", "override_adopted", "metadata_updated"}

// String returns the kind in snake case, as logs and the dashboard show it.
func (k ChangeKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Removes reports whether the change takes the instance out of the
// registry.
func (k ChangeKind) Removes() bool { return k == Cancelled || k == Evicted }

// Change is one entry of the Store's change stream: what one write did to
// one instance. Versions increase by one per change, with no gaps.
type Change struct {
	// Version is the Store version this change produced.
	Version uint64
	// Kind is what happened.
	Kind ChangeKind
	// App (upper case) and ID name the instance.
	App, ID string
	// Instance is the instance after the change; for a removal, its last
	// state with actionType DELETED. It is shared and must not be modified.
	// Its leaseInfo holds what the registrant sent; the lease's own
	// timestamps are in Lease.
	Instance *eureka.InstanceInfo
	// Lease is the lease's timestamps and durations at the change.
	Lease eureka.LeaseInfo
	// New is true for a Registered instance the registry did not hold.
	New bool
	// Replicated is true when the write came from a peer (replication or
	// the start-up sync), so replication does not send it back.
	Replicated bool
	// At is when the change happened, in milliseconds since the epoch.
	At int64
}

// Decorated returns a copy of the instance with Lease in its leaseInfo,
// as a read at the time of the change would have shown it.
func (c *Change) Decorated() *eureka.InstanceInfo {
	i := *c.Instance
	i.LeaseInfo = c.Lease
	return &i
}

// record appends a change to the log and bumps the versions. The caller
// holds the write lock and calls deliver after releasing it.
func (s *Store) record(kind ChangeKind, app string, l *lease, isNew, replicated bool, now int64) {
	v := s.version.Add(1)
	s.lastChange.Store(now)
	if a := s.apps[app]; a != nil {
		a.version = v
		if kind == Registered && isNew {
			l.added = v
		} else {
			a.rewritten = v
		}
	}
	s.changes.add(Change{
		Version: v, Kind: kind, App: app, ID: l.info.ID(), Instance: l.info, Lease: s.leaseInfo(l),
		New: isNew, Replicated: replicated, At: now,
	})
}
