// Package balancer chooses an instance of an application for each call:
// per-app round-robin by default, or random, weighted, zone-preferring or
// any other Policy, with passive ejection of instances whose calls keep
// failing in front of the policy.
//
// A Balancer reads instances through Instancer, which both the discovery
// client (a remote registry) and the registry Store (an in-process one)
// satisfy, so one balancer serves either.
package balancer

import (
	"errors"
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

// Config configures a Balancer.
type Config struct {
	// Policy chooses among the usable instances: RoundRobin, Random,
	// Weighted, ZonePreferring or any other Policy. Default: a new
	// RoundRobin.
	Policy Policy
	// MaxFails is the number of consecutive failed calls after which an
	// instance is ejected: skipped, whatever the policy. Default 3.
	MaxFails int
	// Cooldown is how long an ejected instance is skipped. Default 30s.
	Cooldown time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Balancer picks instances. It is safe for concurrent use; Pick takes no
// lock and, for round-robin, does not allocate.
type Balancer struct {
	src    Instancer
	cfg    Config
	policy Policy

	health   sync.Map // instance id -> *instanceHealth
	failing  atomic.Int64
	maxFails int32
}

type instanceHealth struct {
	fails        atomic.Int32
	ejectedUntil atomic.Int64 // unix nanos
}

// New returns a Balancer over src.
func New(src Instancer, cfg Config) *Balancer {
	if cfg.Policy == nil {
		cfg.Policy = new(RoundRobin)
	}
	if cfg.MaxFails <= 0 {
		cfg.MaxFails = 3
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Balancer{src: src, cfg: cfg, policy: cfg.Policy, maxFails: int32(cfg.MaxFails)}
}

// Pick returns an instance of app (upper case, as Eureka stores it),
// chosen by the policy among the instances that are not ejected, or among
// all of them when every instance is ejected: an app with an UP instance
// always gets one.
func (b *Balancer) Pick(app string) (*eureka.InstanceInfo, error) {
	list := b.src.Instances(app)
	if len(list) == 0 {
		return nil, ErrNoInstances
	}
	return b.Choose(app, list), nil
}

// Choose picks from list, the current instances of app, as Pick does. It
// lets callers that already hold the list share the balancer's policy and
// ejections. list must not be empty.
func (b *Balancer) Choose(app string, list []*eureka.InstanceInfo) *eureka.InstanceInfo {
	c := Candidates{App: app, n: len(list), instances: list, b: b}
	if b.failing.Load() > 0 {
		c.now = b.cfg.Now().UnixNano()
		if i, ok := b.policy.Choose(c); ok {
			return list[i]
		}
		c.now = 0 // every instance is ejected: choose among all
	}
	if i, ok := b.policy.Choose(c); ok {
		return list[i]
	}
	return list[0] // a policy that accepts none of the usable instances
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
