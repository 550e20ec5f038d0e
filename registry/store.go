package registry

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
)

// ErrNotFound is returned for an instance the registry does not hold (or
// holds only as an expired lease).
var ErrNotFound = errors.New("registry: instance not found")

// Store is the registry: a lease per registered instance, the status
// override map, the change log behind deltas, and the self-preservation
// state. All methods are safe for concurrent use. Renew, the hot path, takes
// only a read lock.
//
// Background work (eviction, delta retention, threshold recount, prebuild) runs
// between Start and Stop; each step is also an exported method so that it
// can be driven directly with a fake clock.
type Store struct {
	cfg   Config
	clock Clock
	epoch uint64
	log   *zap.Logger

	mu         sync.RWMutex
	apps       map[string]*appLeases // by upper-case app name
	counts     eureka.StatusCounts   // instances by status over every app
	overrides  map[string]*override  // by instance id, as Eureka keys them
	tombstones map[string]tombstone  // cancels of the last DeltaRetention, by app/id
	changes    changeLog
	expected   int // expected number of clients sending renews
	threshold  int // renews per minute below which evictions stop
	lastEvict  time.Time
	evictMu    sync.Mutex // one eviction run at a time
	started    time.Time
	preserved  bool // self-preservation held at the last eviction run

	// version counts recorded changes; payloads built at one version are
	// served until it moves. stream delivers them.
	version atomic.Uint64
	// lastChange is when the last change was recorded (ms), for prebuild.
	lastChange atomic.Int64
	stream     stream
	renews     minuteCounter

	heartbeats subscribers[Heartbeat]

	payloads payloadCache
	views    views
	counters counters

	// mirror is the remote regions' Mirror (HoldMirror), nil until one is
	// held; mirrorMu makes the first holder the only one.
	mirrorMu sync.Mutex
	mirror   atomic.Value

	loops loopGroup
}

// appLeases is one application's leases. version is the Store version of
// the app's last change, so its payloads can be kept across changes to other
// apps.
type appLeases struct {
	leases  map[string]*lease
	version uint64
	counts  eureka.StatusCounts // instances by status, for the reconcile hash
	// rewritten is the version of the app's last change that was not the
	// registration of a new instance: up to it, a piece of the full
	// registry may be extended with the instances added since rather
	// than encoded again (appendable).
	rewritten uint64
}

// lease is one instance's registration. info is the holder: an immutable
// InstanceInfo replaced (never modified) on every change, so payload builders
// can read it under the read lock while lastRenew moves concurrently.
type lease struct {
	info       *eureka.InstanceInfo
	added      uint64 // the version that registered it anew, else 0
	counted    bool   // info's status is in the counts
	registered int64  // ms
	lastRenew  atomic.Int64
	evicted    int64
	serviceUp  int64
	duration   int64 // ms
}

// New returns an empty Store. Call Start to run its background loops.
func New(cfg Config) *Store {
	cfg = cfg.withDefaults()
	s := &Store{
		cfg:       cfg,
		clock:     cfg.Clock,
		log:       cfg.Logger,
		apps:      map[string]*appLeases{},
		overrides: map[string]*override{},
		expected:  cfg.ExpectedRenewsStart,
	}
	s.started = s.clock.Now()
	s.epoch = rand.Uint64() | 1
	s.updateThresholdLocked()
	s.payloads.init()
	s.stream.init()
	return s
}

// Config returns the Store's settings with defaults filled in.
func (s *Store) Config() Config { return s.cfg }

func (s *Store) nowMillis() int64 { return s.clock.Now().UnixMilli() }

// lookup returns the lease of (app, id). The caller holds s.mu.
func (s *Store) lookup(app, id string) *lease {
	if a := s.apps[app]; a != nil {
		return a.leases[id]
	}
	return nil
}

// expiredAt reports whether l has expired at now (ms), with additional ms of
// grace, following Eureka's Lease.isExpired.
func (s *Store) expiredAt(l *lease, now, additional int64) bool {
	return l.evicted > 0 || now > l.lastRenew.Load()+l.duration+additional
}

// visible reports whether a lease is shown by single-instance lookups:
// expired leases are hidden while lease expiration is enabled.
func (s *Store) visible(l *lease, now int64) bool {
	return l != nil && !(s.leaseExpirationEnabled(now) && s.expiredAt(l, now, 0))
}

// decorate returns a copy of l's holder with leaseInfo filled from the lease,
// as every read renders it. The copy shares the holder's maps, which are
// never modified.
func (s *Store) decorate(l *lease) eureka.InstanceInfo {
	i := *l.info
	i.LeaseInfo = s.leaseInfo(l)
	i.IsCoordinatingDiscoveryServer = s.cfg.InstanceID != "" && i.ID() == s.cfg.InstanceID
	return i
}

// setHolder installs info as l's holder in app a, keeping the status
// counts behind the reconcile hash; a nil info removes l from the counts.
// The caller holds the write lock.
func (s *Store) setHolder(a *appLeases, l *lease, info *eureka.InstanceInfo) {
	if l.info != nil && l.counted {
		s.counts[l.info.Status]--
		a.counts[l.info.Status]--
	}
	l.counted = info != nil
	if info == nil {
		return
	}
	l.info = info
	s.counts.Add(info.Status)
	a.counts.Add(info.Status)
}

// leaseInfo is the leaseInfo block of l as reads render it.
func (s *Store) leaseInfo(l *lease) eureka.LeaseInfo {
	return eureka.LeaseInfo{
		RenewalIntervalInSecs: l.info.LeaseInfo.RenewalInterval(),
		DurationInSecs:        l.info.LeaseInfo.Duration(),
		RegistrationTimestamp: l.registered,
		LastRenewalTimestamp:  l.lastRenew.Load(),
		EvictionTimestamp:     l.evicted,
		ServiceUpTimestamp:    l.serviceUp,
	}
}

// Get returns the instance (app, id) as a client would read it, or false if
// it is unknown or expired.
func (s *Store) Get(app, id string) (*eureka.InstanceInfo, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := s.lookup(app, id)
	if !s.visible(l, s.nowMillis()) {
		return nil, false
	}
	i := s.decorate(l)
	return &i, true
}

// Find returns the first instance with the given id in any application, as
// GET /instances/{id} does.
func (s *Store) Find(id string) (*eureka.InstanceInfo, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := s.nowMillis()
	for _, a := range s.apps {
		if l := a.leases[id]; s.visible(l, now) {
			i := s.decorate(l)
			return &i, true
		}
	}
	return nil, false
}

// Applications returns a snapshot of the whole registry (every status, and
// expired leases not yet evicted), sorted by app name and instance id, with
// versions__delta 1 and its reconcile hash.
func (s *Store) Applications() *eureka.Applications {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snapshotLocked(func(*eureka.InstanceInfo) bool { return true }, 1)
}

// Application returns a snapshot of one application, or false if it has no
// instances.
func (s *Store) Application(app string) (*eureka.Application, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.apps[app]
	if a == nil || len(a.leases) == 0 {
		return nil, false
	}
	return s.appSnapshotLocked(app, a, func(*eureka.InstanceInfo) bool { return true }), true
}

// Len returns the number of leases in the registry.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lenLocked()
}

func (s *Store) lenLocked() int {
	n := 0
	for _, a := range s.apps {
		n += len(a.leases)
	}
	return n
}

// Version returns the version of the last change delivered to the change
// stream: it moves by one on every change to the registry. Versions are
// this Store's own; another Store (a peer, or this process restarted)
// numbers its changes independently.
func (s *Store) Version() uint64 { return s.stream.delivered.Load() }
