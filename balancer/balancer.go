// Package balancer chooses an instance of an application for each call:
// per-app round-robin by default, or random, weighted or zone-preferring,
// with passive ejection of instances whose calls keep failing.
//
// A Balancer reads instances through Instancer, which both the discovery
// client (a remote registry) and the registry Store (an in-process one)
// satisfy, so one balancer serves either.
package balancer

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// Instancer returns the instances of an application that may take traffic
// (the UP ones), in a stable order. The slice must not be modified.
type Instancer interface {
	Instances(app string) []*eureka.InstanceInfo
}

// ErrNoInstances is returned by Pick for an application with no UP instance.
var ErrNoInstances = errors.New("balancer: no UP instance")

// Policy chooses among an application's instances.
type Policy uint8

// The policies.
const (
	// RoundRobin takes the instances in turn, with one counter per app.
	RoundRobin Policy = iota
	// Random takes an instance uniformly at random.
	Random
	// Weighted takes an instance at random in proportion to its "weight"
	// metadata (a positive integer; 1 when absent or invalid).
	Weighted
	// ZonePreferring takes the instances whose "zone" metadata equals
	// Config.Zone in turn, and the others only when there are none.
	ZonePreferring
)

// Config configures a Balancer.
type Config struct {
	// Policy is the choice rule. Default RoundRobin.
	Policy Policy
	// Zone is the caller's zone, for ZonePreferring.
	Zone string
	// MaxFails is the number of consecutive failed calls after which an
	// instance is skipped. Default 3.
	MaxFails int
	// Cooldown is how long an ejected instance is skipped. Default 30s.
	Cooldown time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Rand is the random source for Random and Weighted. Default: seeded
	// from the clock.
	Rand *rand.Rand
}

// Balancer picks instances. It is safe for concurrent use; Pick takes no
// lock and, for round-robin, does not allocate.
type Balancer struct {
	src Instancer
	cfg Config

	// counters is copy-on-write: apps are added rarely and read on every
	// pick, and a plain map read is the cheapest lookup there is.
	counters   atomic.Pointer[map[string]*atomic.Uint64]
	countersMu sync.Mutex

	health   sync.Map // instance id -> *instanceHealth
	failing  atomic.Int64
	randMu   sync.Mutex
	maxFails int32
}

type instanceHealth struct {
	fails        atomic.Int32
	ejectedUntil atomic.Int64 // unix nanos
}

// New returns a Balancer over src.
func New(src Instancer, cfg Config) *Balancer {
	if cfg.MaxFails <= 0 {
		cfg.MaxFails = 3
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		seed := uint64(cfg.Now().UnixNano())
		cfg.Rand = rand.New(rand.NewPCG(seed, seed>>7|1))
	}
	return &Balancer{src: src, cfg: cfg, maxFails: int32(cfg.MaxFails)}
}

// Pick returns the next instance of app (upper case, as Eureka stores it).
// Ejected instances are skipped unless every instance is ejected: an app
// with an UP instance always gets one.
func (b *Balancer) Pick(app string) (*eureka.InstanceInfo, error) {
	list := b.src.Instances(app)
	if len(list) == 0 {
		return nil, ErrNoInstances
	}
	return b.Choose(app, list), nil
}

// Choose picks from list, the current instances of app, by the policy. It
// lets callers that already hold the list (a gateway's upstream pool) share
// the balancer's counters and ejections. list must not be empty.
func (b *Balancer) Choose(app string, list []*eureka.InstanceInfo) *eureka.InstanceInfo {
	var now int64
	if b.failing.Load() > 0 {
		now = b.cfg.Now().UnixNano()
	}
	switch b.cfg.Policy {
	case Random:
		return b.random(list, now)
	case Weighted:
		return b.weighted(list, now)
	case ZonePreferring:
		return b.zone(app, list, now)
	}
	return b.roundRobin(app, list, now)
}

func (b *Balancer) counter(app string) *atomic.Uint64 {
	if m := b.counters.Load(); m != nil {
		if c := (*m)[app]; c != nil {
			return c
		}
	}
	b.countersMu.Lock()
	defer b.countersMu.Unlock()
	old := b.counters.Load()
	if old != nil && (*old)[app] != nil {
		return (*old)[app]
	}
	next := map[string]*atomic.Uint64{}
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	c := new(atomic.Uint64)
	next[app] = c
	b.counters.Store(&next)
	return c
}

// roundRobin takes the next instance in turn, skipping ejected ones.
func (b *Balancer) roundRobin(app string, list []*eureka.InstanceInfo, now int64) *eureka.InstanceInfo {
	if now == 0 {
		idx, _ := b.Next(app, len(list), nil)
		return list[idx]
	}
	idx, _ := b.Next(app, len(list), func(k int) bool { return !b.ejected(list[k], now) })
	return list[idx]
}

// Next is the round-robin rotation itself: it advances app's counter and
// returns the index of the next of n candidates that usable accepts (all,
// when usable is nil), in turn from the counter. When usable accepts none,
// it returns the counter's own index and false. A gateway uses it to rotate
// over its own pool with its own health checks, so one counter per app
// serves every caller.
func (b *Balancer) Next(app string, n int, usable func(int) bool) (int, bool) {
	start := b.counter(app).Add(1) - 1
	if usable == nil {
		return int(start % uint64(n)), true
	}
	for k := uint64(0); k < uint64(n); k++ {
		if idx := int((start + k) % uint64(n)); usable(idx) {
			return idx, true
		}
	}
	return int(start % uint64(n)), false
}

func (b *Balancer) random(list []*eureka.InstanceInfo, now int64) *eureka.InstanceInfo {
	b.randMu.Lock()
	start := b.cfg.Rand.IntN(len(list))
	b.randMu.Unlock()
	for k := range list {
		if i := list[(start+k)%len(list)]; now == 0 || !b.ejected(i, now) {
			return i
		}
	}
	return list[start]
}

func (b *Balancer) weighted(list []*eureka.InstanceInfo, now int64) *eureka.InstanceInfo {
	total := 0
	for _, i := range list {
		if now == 0 || !b.ejected(i, now) {
			total += weight(i)
		}
	}
	if total == 0 {
		return b.random(list, 0)
	}
	b.randMu.Lock()
	r := b.cfg.Rand.IntN(total)
	b.randMu.Unlock()
	for _, i := range list {
		if now != 0 && b.ejected(i, now) {
			continue
		}
		if r -= weight(i); r < 0 {
			return i
		}
	}
	return list[len(list)-1]
}

func weight(i *eureka.InstanceInfo) int {
	if w, err := strconv.Atoi(i.Metadata["weight"]); err == nil && w > 0 {
		return w
	}
	return 1
}

// zone takes the same-zone instances that are not ejected in turn, or
// falls back to round-robin over all.
func (b *Balancer) zone(app string, list []*eureka.InstanceInfo, now int64) *eureka.InstanceInfo {
	sameZone := func(i *eureka.InstanceInfo) bool {
		return i.Metadata["zone"] == b.cfg.Zone && (now == 0 || !b.ejected(i, now))
	}
	m := uint64(0)
	for _, i := range list {
		if sameZone(i) {
			m++
		}
	}
	if m == 0 {
		return b.roundRobin(app, list, now)
	}
	k := (b.counter(app).Add(1) - 1) % m
	for _, i := range list {
		if sameZone(i) {
			if k == 0 {
				return i
			}
			k--
		}
	}
	return list[0]
}

func (b *Balancer) ejected(i *eureka.InstanceInfo, now int64) bool {
	h, ok := b.health.Load(i.ID())
	return ok && h.(*instanceHealth).ejectedUntil.Load() > now
}

// ReportFailure records a failed call to inst (a connection error, say).
// After MaxFails consecutive failures the instance is skipped for Cooldown.
func (b *Balancer) ReportFailure(inst *eureka.InstanceInfo) {
	v, loaded := b.health.Load(inst.ID())
	if !loaded {
		v, _ = b.health.LoadOrStore(inst.ID(), &instanceHealth{})
	}
	h := v.(*instanceHealth)
	if h.fails.Add(1) == 1 {
		b.failing.Add(1)
	}
	if h.fails.Load() >= b.maxFails {
		h.ejectedUntil.Store(b.cfg.Now().Add(b.cfg.Cooldown).UnixNano())
	}
}

// ReportSuccess records a successful call to inst, which ends its run of
// failures and any ejection.
func (b *Balancer) ReportSuccess(inst *eureka.InstanceInfo) {
	if b.failing.Load() == 0 {
		return
	}
	if v, ok := b.health.Load(inst.ID()); ok {
		h := v.(*instanceHealth)
		if h.fails.Swap(0) > 0 {
			b.failing.Add(-1)
		}
		h.ejectedUntil.Store(0)
	}
}
