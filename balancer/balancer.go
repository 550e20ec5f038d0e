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

	states   sync.Map     // instanceKey -> *instanceState
	tracked  atomic.Int64 // entries in states
	failing  atomic.Int64 // entries in states with fails > 0
	maxFails int32

	// seen is, per app, the last instance list of the local region whose
	// departed instances were forgotten (see forget); regionSeen the
	// same per remote region, then app.
	seen       perapp.Map[appSeen]
	regionSeen perapp.Map[perapp.Map[appSeen]]
	// ejections counts, per app, the instances ejected.
	ejections perapp.Map[atomic.Uint64]
}

// instanceKey names an instance for the balancer: its app (upper case),
// its region ("" for the local one, else the remote region a route fails
// over to or a subset names) and its id. Ids repeat across apps and
// regions (a StatefulSet's pod names, host:port ids): what one app's or
// region's instance does says nothing of another's of the same id.
type instanceKey struct {
	app, region, id string
}

// keyOf returns inst's key in region, inst an instance of app (upper
// case). A pick's candidates take app from the pick, upper-cased once for
// them all, not from each instance.
func keyOf(app, region string, inst *eureka.InstanceInfo) instanceKey {
	return instanceKey{app: app, region: region, id: inst.ID()}
}

// instKeyOf is keyOf for an instance reported on its own, out of a pick.
func instKeyOf(region string, inst *eureka.InstanceInfo) instanceKey {
	return keyOf(strings.ToUpper(inst.App), region, inst)
}

// instanceState is what the balancer knows of an instance. It is kept
// while the instance is in its app's list (of its region), and forgotten
// when it leaves.
type instanceState struct {
	fails        atomic.Int32
	ejectedUntil atomic.Int64 // unix nanos
	inFlight     atomic.Int64 // calls between Begin and their end
	// ejectedSince is when its run of failures first ejected it (unix
	// nanos, 0 while it is not ejected), and lastFailure the kind of the
	// run's last failure: what Ejected reports.
	ejectedSince atomic.Int64
	lastFailure  atomic.Int32
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
			b.forget(app, "", nil)
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
	return b.choose(app, "", "", list)
}

// choose is Choose with the region of list's instances ("" for the local
// one) and the key the policy keeps its state under (see
// Candidates.Key). A list that is a subset of the app's instances (a
// route's, a Selector's) is not the list the balancer forgets departed
// instances by: that is the Instancer's own.
func (b *Balancer) choose(app, region, key string, list []*eureka.InstanceInfo) *eureka.InstanceInfo {
	if b.tracked.Load() > 0 {
		if key == "" {
			b.forget(app, region, list)
		} else {
			b.forget(app, region, b.instancesIn(app, region))
		}
	}
	checker := b.cfg.Checker
	if checker != nil && region == "" {
		checker.watch(app)
	}
	c := Candidates{App: app, Key: key, n: len(list), instances: list, b: b, region: region, upper: strings.ToUpper(app)}
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

// instancesIn returns app's instances in region: the Instancer's own
// for the local region (""), else those of a remote region when the
// Instancer answers for others (a Store with remote regions, a
// discovery client that fetches them).
func (b *Balancer) instancesIn(app, region string) []*eureka.InstanceInfo {
	if region == "" {
		return b.src.Instances(app)
	}
	if in, ok := b.src.(RegionInstancer); ok {
		return in.InstancesIn(app, region)
	}
	return nil
}

// ejected reports whether i, an instance of app (upper case) in region,
// is ejected at now, or failing its health check (which checks the local
// region's instances only).
func (b *Balancer) ejected(app, region string, i *eureka.InstanceInfo, now int64) bool {
	if region == "" && b.cfg.Checker != nil && b.cfg.Checker.isDown(i.App, i.ID()) {
		return true
	}
	h, ok := b.states.Load(keyOf(app, region, i))
	return ok && h.(*instanceState).ejectedUntil.Load() > now
}

// state returns the entry of inst in region, making it if needed.
func (b *Balancer) state(region string, inst *eureka.InstanceInfo) *instanceState {
	k := instKeyOf(region, inst)
	if v, ok := b.states.Load(k); ok {
		return v.(*instanceState)
	}
	v, loaded := b.states.LoadOrStore(k, new(instanceState))
	if !loaded {
		b.tracked.Add(1)
		// The instance may have left its app's list already: have the
		// next pick look again.
		b.seenOf(k.app, region).added.Add(1)
	}
	return v.(*instanceState)
}

// seenOf returns the record of app's list in region, making it.
func (b *Balancer) seenOf(app, region string) *appSeen {
	if region == "" {
		return b.seen.Get(app)
	}
	return b.regionSeen.Get(region).Get(app)
}

// lookupSeen returns the record of app's list in region, or nil.
func (b *Balancer) lookupSeen(app, region string) *appSeen {
	if region == "" {
		return b.seen.Lookup(app)
	}
	if r := b.regionSeen.Lookup(region); r != nil {
		return r.Lookup(app)
	}
	return nil
}

// live reports whether h is still the entry of inst in region, and when
// it is not (it was forgotten meanwhile), takes back the failures just
// counted on it.
func (b *Balancer) live(region string, inst *eureka.InstanceInfo, h *instanceState) bool {
	if v, ok := b.states.Load(instKeyOf(region, inst)); ok && v == h {
		return true
	}
	if h.fails.Swap(0) > 0 {
		b.failing.Add(-1)
	}
	return false
}

// forget drops the state of app's instances in region that are not in
// list, the app's current instances there, when list is not the list it
// last looked at or states were added since. It costs two atomic loads
// when nothing changed, and a pass over the states when something did.
func (b *Balancer) forget(app, region string, list []*eureka.InstanceInfo) {
	var seen *appSeen
	var data **eureka.InstanceInfo
	if len(list) == 0 {
		// Keep no record of apps without instances or states: app
		// names can come from requests.
		if seen = b.lookupSeen(app, region); seen == nil {
			return
		}
	} else {
		seen = b.seenOf(app, region)
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
		h, key := v.(*instanceState), k.(instanceKey)
		if key.region != region || !strings.EqualFold(key.app, app) || listed(key.id) {
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

// Begin counts a call to inst (of the local region) as in progress until
// end is called, when the call is over (once; later calls do nothing).
// LeastRequests chooses by these counts; the other policies ignore them.
// HTTPClient calls Begin for each request it sends; Retry.Begin counts
// the current attempt's instance in its own region.
func (b *Balancer) Begin(inst *eureka.InstanceInfo) (end func()) { return b.begin("", inst) }

func (b *Balancer) begin(region string, inst *eureka.InstanceInfo) (end func()) {
	h := b.state(region, inst)
	h.inFlight.Add(1)
	var ended atomic.Bool
	return func() {
		if ended.CompareAndSwap(false, true) {
			h.inFlight.Add(-1)
		}
	}
}

// inFlight returns the number of calls to inst, of app (upper case) in
// region, in progress.
func (b *Balancer) inFlight(app, region string, inst *eureka.InstanceInfo) int {
	if v, ok := b.states.Load(keyOf(app, region, inst)); ok {
		return int(v.(*instanceState).inFlight.Load())
	}
	return 0
}

// ReportFailure records a failed call to inst (a connection error, say),
// an instance of the local region. After MaxFails consecutive failures the
// instance is ejected: skipped for Cooldown. What the balancer knows of an
// instance is kept under its app, region and id, and forgotten when it
// leaves its app's list; Retry reports the failures of another region's
// instances under that region.
func (b *Balancer) ReportFailure(inst *eureka.InstanceInfo) { b.fail("", inst, failed) }

// ReportTimeout records a call to inst that got no answer in time. It is
// a failure that ejects the instance at once, whatever MaxFails: every
// call sent to a hung instance costs its caller the whole timeout, where a
// refused connection costs next to nothing.
func (b *Balancer) ReportTimeout(inst *eureka.InstanceInfo) { b.fail("", inst, TimedOut) }

// fail records a failed call of kind f to inst, of region; a timeout
// ejects it at once.
func (b *Balancer) fail(region string, inst *eureka.InstanceInfo, f Failure) {
	h := b.state(region, inst)
	if h.fails.Add(1) == 1 {
		b.failing.Add(1)
	}
	h.lastFailure.Store(int32(f))
	if f == TimedOut || h.fails.Load() >= b.maxFails {
		now := b.cfg.Now()
		if h.ejectedUntil.Swap(now.Add(b.cfg.Cooldown).UnixNano()) <= now.UnixNano() {
			b.ejections.Get(strings.ToUpper(inst.App)).Add(1) // it was not out already
		}
		h.ejectedSince.CompareAndSwap(0, now.UnixNano())
	}
	b.live(region, inst, h)
}

// ReportSuccess records a successful call to inst, of the local region,
// which ends its run of failures and any ejection.
func (b *Balancer) ReportSuccess(inst *eureka.InstanceInfo) { b.succeed("", inst) }

func (b *Balancer) succeed(region string, inst *eureka.InstanceInfo) {
	if b.failing.Load() == 0 {
		return
	}
	if v, ok := b.states.Load(instKeyOf(region, inst)); ok {
		h := v.(*instanceState)
		if h.fails.Swap(0) > 0 {
			b.failing.Add(-1)
		}
		h.ejectedUntil.Store(0)
		h.ejectedSince.Store(0)
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

// ForgetApps drops what the balancer keeps per application of apps,
// which have left the registry: their Ejections and their Checker's
// Failures, so that the series exported from them are those of
// registered applications, and the record of their last lists. A
// gateway's sweep calls it with the applications whose traffic counters
// it dropped (traffic.Recorder.Sweep).
func (b *Balancer) ForgetApps(apps []string) {
	forgetApps(&b.ejections, apps)
	forgetApps(&b.seen, apps)
	for _, r := range b.regionSeen.Snapshot() {
		forgetApps(r, apps)
	}
	if b.cfg.Checker != nil {
		b.cfg.Checker.ForgetApps(apps)
	}
}

// forgetApps drops apps from m.
func forgetApps[T any](m *perapp.Map[T], apps []string) {
	if len(apps) == 0 {
		return
	}
	gone := make(map[string]bool, len(apps))
	for _, app := range apps {
		gone[app] = true
	}
	m.DeleteFunc(func(app string, _ *T) bool { return gone[app] })
}
