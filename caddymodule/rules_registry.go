package caddymodule

import (
	"sync"

	"github.com/eurekagate/eurekagate/routing"
)

// gatewayRouters are the routers of the eureka_gateway handlers, by the
// registry they route to, so that eureka_dashboard can show the traffic
// rules in force, and the registry's sweeper drop what they keep of
// departed apps. A gateway registers its router when it is provisioned
// and unregisters it at cleanup; during a reload the new config's
// routers come in before the old config's leave.
var gatewayRouters = routerRegistry{byEntry: map[*entry]map[*routing.Router]uint64{}}

// routerRegistry is the set of routers per registry entry, each with the
// order of its registration.
type routerRegistry struct {
	mu      sync.Mutex
	seq     uint64
	byEntry map[*entry]map[*routing.Router]uint64
}

// register records r as routing to e's instances. A nil entry or router
// is ignored.
func register(e *entry, r *routing.Router) { gatewayRouters.register(e, r) }

// unregister forgets r, whichever entry it was registered with. A router
// never registered, or nil, is ignored.
func unregister(r *routing.Router) { gatewayRouters.unregister(r) }

// rulesOf returns the rules in force of the most recently registered
// router of e that has rules, or nil.
func rulesOf(e *entry) *routing.Rules { return gatewayRouters.rulesOf(e) }

func (g *routerRegistry) register(e *entry, r *routing.Router) {
	if e == nil || r == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	routers := g.byEntry[e]
	if routers == nil {
		routers = map[*routing.Router]uint64{}
		g.byEntry[e] = routers
	}
	g.seq++
	routers[r] = g.seq
}

func (g *routerRegistry) unregister(r *routing.Router) {
	if r == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for e, routers := range g.byEntry {
		if _, ok := routers[r]; !ok {
			continue
		}
		delete(routers, r)
		if len(routers) == 0 {
			delete(g.byEntry, e)
		}
	}
}

func (g *routerRegistry) rulesOf(e *entry) *routing.Rules {
	g.mu.Lock()
	defer g.mu.Unlock()
	var rules *routing.Rules
	var newest uint64
	for r, seq := range g.byEntry[e] {
		if seq <= newest {
			continue
		}
		// Rules reads an atomic: a router's rules may change (SetRules).
		if rr := r.Rules(); rr != nil {
			rules, newest = rr, seq
		}
	}
	return rules
}

// each calls f with each router registered for e, outside the lock.
func (g *routerRegistry) each(e *entry, f func(*routing.Router)) {
	g.mu.Lock()
	routers := make([]*routing.Router, 0, len(g.byEntry[e]))
	for r := range g.byEntry[e] {
		routers = append(routers, r)
	}
	g.mu.Unlock()
	for _, r := range routers {
		f(r)
	}
}
