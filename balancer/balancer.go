// Package balancer chooses an instance of an application for each call:
// per-app round-robin by default, or random, weighted, zone-preferring,
// least-requests or any other Policy, with passive ejection of instances
// whose calls keep failing (or time out) in front of the policy, and,
// opt-in, active health checks of the URL each instance registered
// (Checker).
//
// A Balancer reads instances through Instancer, which both the discovery
// client (a remote registry) and the registry Store (an in-process one)
// satisfy, so one balancer serves either.
package balancer

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/perapp"
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
	// Weighted, ZonePreferring, LeastRequests or any other Policy.
	// Default: a new RoundRobin.
	Policy Policy
	// MaxFails is the number of consecutive failed calls after which an
	// instance is ejected: skipped, whatever the policy. Default 3.
	MaxFails int
	// Cooldown is how long an ejected instance is skipped. Default 30s.
	Cooldown time.Duration
	// Checker, when set, runs active health checks: an instance failing
	// its check is skipped like an ejected one until it passes again. The
	// balancer has it check the applications it picks for, but does not
	// start or stop it; its owner does. Default: none.
	Checker *Checker
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Balancer picks instances. It is safe for concurrent use; Pick takes no
// lock and, for round-robin, does not allocate.
type Balancer struct {
	src    Instancer
	cfg    Config
	policy Policy

	states   sync.Map     // instance id -> *instanceState
	tracked  atomic.Int64 // entries in states
	failing  atomic.Int64 // entries in states with fails > 0
	maxFails int32

	// seen is, per app, the last instance list whose departed instances
	// were forgotten: see forget.
	seen perapp.Map[appSeen]
	// ejections counts, per app, the instances ejected.
	ejections perapp.Map[atomic.Uint64]
}

// instanceState is what the balancer knows of an instance. It is kept
// while the instance is in its app's list, and forgotten when it leaves.
type instanceState struct {
	app          string // the instance's app, upper case
	fails        atomic.Int32
	ejectedUntil atomic.Int64 // unix nanos
	inFlight     atomic.Int64 // calls between Begin and their end
}

// appSeen records the list an app's picks saw when they last forgot the
// state of departed instances, and counts the states added since.
type appSeen struct {
	last  atomic.Pointer[listSeen]
	added atomic.Uint64
}

type listSeen struct {
	data  **eureka.InstanceInfo // the list's backing array: a new list is a new array
	n     int
	added uint64
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
// chosen by the policy among the instances that are neither ejected nor
// failing their health check (with a Checker), or among all of them when
// none is left: an app with an UP instance always gets one.
func (b *Balancer) Pick(app string) (*eureka.InstanceInfo, error) {
	list := b.src.Instances(app)
	if len(list) == 0 {
		if b.tracked.Load() > 0 {
			b.forget(app, nil)
		}
		return nil, ErrNoInstances
	}
	return b.Choose(app, list), nil
}

// Choose picks from list, the current instances of app, as Pick does. It
// lets callers that already hold the list share the balancer's policy and
// ejections. list must not be empty. Pass the Instancer's own slice rather
// than a copy: the balancer forgets the state of departed instances when
// it sees a new list, which a copy on every call would make it do on every
// call.
func (b *Balancer) Choose(app string, list []*eureka.InstanceInfo) *eureka.InstanceInfo {
	return b.choose(app, "", list)
}

// choose is Choose with the key the policy keeps its state under (see
// Candidates.Key). A list that is a subset of the app's instances (a
// route's, a Selector's) is not the list the balancer forgets departed
// instances by: that is the Instancer's own.
func (b *Balancer) choose(app, key string, list []*eureka.InstanceInfo) *eureka.InstanceInfo {
	if b.tracked.Load() > 0 {
		if key == "" {
			b.forget(app, list)
		} else {
			b.forget(app, b.src.Instances(app))
		}
	}
	checker := b.cfg.Checker
	if checker != nil {
		checker.watch(app)
	}
	c := Candidates{App: app, Key: key, n: len(list), instances: list, b: b}
	if b.failing.Load() > 0 || (checker != nil && checker.anyDown()) {
		c.now = b.cfg.Now().UnixNano()
		if i, ok := b.policy.Choose(c); ok {
			return list[i]
		}
		c.now = 0 // every instance is out: choose among all
	}
	if i, ok := b.policy.Choose(c); ok {
		return list[i]
	}
	return list[0] // a policy that accepts none of the usable instances
}

// ejected reports whether i is ejected at now, or failing its health
// check.
func (b *Balancer) ejected(i *eureka.InstanceInfo, now int64) bool {
	if b.cfg.Checker != nil && b.cfg.Checker.isDown(i.ID()) {
		return true
	}
	h, ok := b.states.Load(i.ID())
	return ok && h.(*instanceState).ejectedUntil.Load() > now
}

// state returns inst's entry, making it if needed.
func (b *Balancer) state(inst *eureka.InstanceInfo) *instanceState {
	id := inst.ID()
	if v, ok := b.states.Load(id); ok {
		return v.(*instanceState)
	}
	app := strings.ToUpper(inst.App)
	v, loaded := b.states.LoadOrStore(id, &instanceState{app: app})
	if !loaded {
		b.tracked.Add(1)
		// The instance may have left its app's list already: have the
		// next pick look again.
		b.seen.Get(app).added.Add(1)
	}
	return v.(*instanceState)
}

// live reports whether h is still inst's entry, and when it is not (it
// was forgotten meanwhile), takes back the failures just counted on it.
func (b *Balancer) live(inst *eureka.InstanceInfo, h *instanceState) bool {
	if v, ok := b.states.Load(inst.ID()); ok && v == h {
		return true
	}
	if h.fails.Swap(0) > 0 {
		b.failing.Add(-1)
	}
	return false
}

// forget drops the state of app's instances that are not in list, the
// app's current instances, when list is not the list it last looked at or
// states were added since. It costs two atomic loads when nothing changed,
// and a pass over the states when something did.
func (b *Balancer) forget(app string, list []*eureka.InstanceInfo) {
	var seen *appSeen
	var data **eureka.InstanceInfo
	if len(list) == 0 {
		// Keep no record of apps without instances or states: app
		// names can come from requests.
		if seen = b.seen.Lookup(app); seen == nil {
			return
		}
	} else {
		seen = b.seen.Get(app)
		data = &list[0]
	}
	added := seen.added.Load()
	last := seen.last.Load()
	if last != nil && last.data == data && last.n == len(list) && last.added == added {
		return
	}
	if !seen.last.CompareAndSwap(last, &listSeen{data: data, n: len(list), added: added}) {
		return // another pick is at it
	}
	var ids map[string]bool
	listed := func(id string) bool {
		if len(list) <= 16 {
			for _, i := range list {
				if i.ID() == id {
					return true
				}
			}
			return false
		}
		if ids == nil {
			ids = make(map[string]bool, len(list))
			for _, i := range list {
				ids[i.ID()] = true
			}
		}
		return ids[id]
	}
	b.states.Range(func(k, v any) bool {
		h := v.(*instanceState)
		if !strings.EqualFold(h.app, app) || listed(k.(string)) {
			return true
		}
		if b.states.CompareAndDelete(k, h) {
			b.tracked.Add(-1)
			if h.fails.Swap(0) > 0 {
				b.failing.Add(-1)
			}
		}
		return true
	})
}

// Begin counts a call to inst as in progress until end is called, when the
// call is over (once; later calls do nothing). LeastRequests chooses by
// these counts; the other policies ignore them. HTTPClient calls Begin for
// each request it sends.
func (b *Balancer) Begin(inst *eureka.InstanceInfo) (end func()) {
	h := b.state(inst)
	h.inFlight.Add(1)
	var ended atomic.Bool
	return func() {
		if ended.CompareAndSwap(false, true) {
			h.inFlight.Add(-1)
		}
	}
}

// inFlight returns the number of calls to inst in progress.
func (b *Balancer) inFlight(inst *eureka.InstanceInfo) int {
	if v, ok := b.states.Load(inst.ID()); ok {
		return int(v.(*instanceState).inFlight.Load())
	}
	return 0
}

// ReportFailure records a failed call to inst (a connection error, say).
// After MaxFails consecutive failures the instance is ejected: skipped for
// Cooldown. What the balancer knows of an instance is forgotten when it
// leaves its app's list.
func (b *Balancer) ReportFailure(inst *eureka.InstanceInfo) { b.fail(inst, false) }

// ReportTimeout records a call to inst that got no answer in time. It is
// a failure that ejects the instance at once, whatever MaxFails: every
// call sent to a hung instance costs its caller the whole timeout, where a
// refused connection costs next to nothing.
func (b *Balancer) ReportTimeout(inst *eureka.InstanceInfo) { b.fail(inst, true) }

func (b *Balancer) fail(inst *eureka.InstanceInfo, eject bool) {
	h := b.state(inst)
	if h.fails.Add(1) == 1 {
		b.failing.Add(1)
	}
	if eject || h.fails.Load() >= b.maxFails {
		now := b.cfg.Now()
		if h.ejectedUntil.Swap(now.Add(b.cfg.Cooldown).UnixNano()) <= now.UnixNano() {
			b.ejections.Get(h.app).Add(1) // it was not out already
		}
	}
	b.live(inst, h)
}

// ReportSuccess records a successful call to inst, which ends its run of
// failures and any ejection.
func (b *Balancer) ReportSuccess(inst *eureka.InstanceInfo) {
	if b.failing.Load() == 0 {
		return
	}
	if v, ok := b.states.Load(inst.ID()); ok {
		h := v.(*instanceState)
		if h.fails.Swap(0) > 0 {
			b.failing.Add(-1)
		}
		h.ejectedUntil.Store(0)
	}
}

// Ejections returns, per app (upper case), how many times its instances
// were ejected (skipped after failures) so far.
func (b *Balancer) Ejections() map[string]uint64 {
	out := map[string]uint64{}
	for app, n := range b.ejections.Snapshot() {
		out[app] = n.Load()
	}
	return out
}

// Checker returns the balancer's Checker (Config.Checker), or nil.
func (b *Balancer) Checker() *Checker { return b.cfg.Checker }
