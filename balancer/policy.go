package balancer

import (
	"math/rand/v2"
	"sync"

	"github.com/eurekagate/eurekagate/eureka"
)

// Policy chooses which of an application's instances takes a call.
//
// A Balancer asks its policy on every Pick, and the Caddy selection
// policies eureka_round_robin and eureka_least_requests ask theirs on every
// proxied request, so one policy type serves both. A policy only chooses:
// the caller decides which candidates are usable (the Balancer skips
// ejected instances, Caddy skips upstreams its health checks mark down).
//
// A policy is safe for concurrent use. One that keeps state per
// application (a counter) keeps it under Candidates.StateKey, so one policy
// value can serve every application. To add a policy, write a type with
// this method; nothing else needs to know about it.
type Policy interface {
	// Choose returns the index of the candidate that takes the call, and
	// true; or -1 and false when it accepts none (when no candidate is
	// usable, say). It must only return an index that c.Usable accepts.
	Choose(c Candidates) (int, bool)
}

// Candidates are the instances of one application that a Policy chooses
// among, by index from 0 to Len()-1. They are built by a Balancer over an
// instance list, or with NewCandidates over any list, such as a Caddy
// upstream pool. The zero value has no candidates.
type Candidates struct {
	// App is the application, upper case as Eureka stores it.
	App string
	// Key, when not empty, names the subset of App's instances the
	// candidates are (a traffic rule's, say: "ORDERS version=2.1").
	// Policies keep their per-application state under StateKey, so that
	// each subset takes its turns apart from the others.
	Key string

	n         int
	instances []*eureka.InstanceInfo
	usable    func(int) bool
	inFlight  func(int) int

	// Set by a Balancer: b counts the calls in flight, and when now is
	// not 0, instances b ejected at now (or whose health check fails) are
	// not usable; region is the instances' ("" for the local one).
	b      *Balancer
	now    int64
	region string
	upper  string // App upper-cased, as b keys its instances
}

// NewCandidates returns n candidates of app. instances[i], when given,
// is the instance behind candidate i; a list of another length than n is
// ignored. usable reports whether candidate i may take the call (nil: all
// may). inFlight reports how many calls candidate i has in progress (nil:
// none are counted).
func NewCandidates(app string, n int, instances []*eureka.InstanceInfo, usable func(int) bool, inFlight func(int) int) Candidates {
	if len(instances) != n {
		instances = nil
	}
	return Candidates{App: app, n: n, instances: instances, usable: usable, inFlight: inFlight}
}

// StateKey returns the key a policy keeps its per-application state
// under: Key, or App when the candidates are all of App's instances.
func (c Candidates) StateKey() string {
	if c.Key != "" {
		return c.Key
	}
	return c.App
}

// Len returns the number of candidates, usable or not.
func (c Candidates) Len() int { return c.n }

// Instance returns the instance behind candidate i, or nil when the
// candidates were built without instances (a Caddy pool from another
// upstream source, for example).
func (c Candidates) Instance(i int) *eureka.InstanceInfo {
	if c.instances == nil {
		return nil
	}
	return c.instances[i]
}

// Usable reports whether candidate i may take the call.
func (c Candidates) Usable(i int) bool {
	if c.usable != nil && !c.usable(i) {
		return false
	}
	return c.now == 0 || !c.b.ejected(c.upper, c.region, c.instances[i], c.now)
}

// InFlight returns the number of calls in progress to candidate i, as far
// as the caller counts them: a Balancer counts the calls started with
// Balancer.Begin, Caddy counts every proxied request. 0 when nobody
// counts.
func (c Candidates) InFlight(i int) int {
	switch {
	case c.inFlight != nil:
		return c.inFlight(i)
	case c.b != nil:
		return c.b.inFlight(c.upper, c.region, c.instances[i])
	}
	return 0
}

// Filter returns the same candidates, of which only those that keep
// accepts (and c accepts) are usable. Policies use it to choose among a
// subset, such as the instances of one zone.
func (c Candidates) Filter(keep func(int) bool) Candidates {
	out := c
	out.usable = func(i int) bool { return keep(i) && c.Usable(i) }
	out.now = 0 // c.Usable checks ejection
	return out
}

// lockedRand is a *rand.Rand shared by concurrent callers; with a nil
// Rand it uses the package-level source, which needs no lock.
type lockedRand struct {
	mu sync.Mutex
}

func (l *lockedRand) intN(r *rand.Rand, n int) int {
	if r == nil {
		return rand.IntN(n)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return r.IntN(n)
}
