package routing

import (
	"sync"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/perapp"
)

// SetRules puts rules in force for the requests routed from now on (nil:
// none). Requests being served keep the subset they were given.
func (r *Router) SetRules(rules *Rules) {
	r.subsets.install(rules)
	r.rules.Store(rules)
	r.resetGuards()
}

// Rules returns the rules in force, or nil.
func (r *Router) Rules() *Rules { return r.rules.Load() }

// subsetStates is a Router's state of each subset it routes to: the
// instance sources of its retries. It is
// copy-on-write: rules change rarely, and are read on every request.
type subsetStates struct {
	m  atomic.Pointer[map[*Subset]*subsetState]
	mu sync.Mutex
	r  *Router
	// foreign are the subsets trusted proxies named that no rule has, by
	// app and label; at most maxForeign of them.
	foreign  perapp.Map[perapp.Map[atomic.Pointer[Subset]]]
	nForeign atomic.Int64
}

const maxForeign = 256

type subsetState struct {
	plain  subsetSide
	secure subsetSide
}

// install makes the state of rules' subsets.
func (s *subsetStates) install(rules *Rules) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := map[*Subset]*subsetState{}
	if old := s.m.Load(); old != nil {
		for sub, st := range *old {
			if sub.foreign {
				next[sub] = st
			}
		}
	}
	if rules != nil {
		for _, a := range rules.apps {
			for _, sub := range a.subsets {
				next[sub] = s.state(sub)
			}
		}
	}
	s.m.Store(&next)
}

func (s *subsetStates) state(sub *Subset) *subsetState {
	st := &subsetState{}
	st.plain = subsetSide{sub: sub, side: s.r.plain}
	st.secure = subsetSide{sub: sub, side: s.r.secure}
	return st
}

func (s *subsetStates) of(sub *Subset) *subsetState {
	if m := s.m.Load(); m != nil {
		if st := (*m)[sub]; st != nil {
			return st
		}
	}
	return nil
}

// trusted returns the subset a trusted proxy's RouteHeader names for app:
// one of its rules' (a), or one made for it.
func (s *subsetStates) trusted(app string, a *appRules, label string) *Subset {
	if a != nil {
		for _, sub := range a.subsets {
			if sub.Label() == label {
				return sub
			}
		}
	}
	if byLabel := s.foreign.Lookup(app); byLabel != nil {
		if p := byLabel.Lookup(label); p != nil {
			if sub := p.Load(); sub != nil && s.of(sub) != nil {
				return sub
			}
		}
	}
	sel, err := balancer.ParseSelector(label)
	if err != nil || s.nForeign.Load() >= maxForeign {
		return nil
	}
	sub, err := newSubset(app, sel)
	if err != nil {
		return nil
	}
	sub.foreign = true
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.foreign.Get(app).Get(label)
	if old := p.Load(); old != nil {
		return old
	}
	s.nForeign.Add(1)
	next := map[*Subset]*subsetState{}
	if old := s.m.Load(); old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[sub] = s.state(sub)
	s.m.Store(&next)
	p.Store(sub)
	return sub
}

// A Selection is the instances of an app a request goes to, after the
// traffic rules.
type Selection struct {
	// Instances may take the request; none when Answer is set.
	Instances []*eureka.InstanceInfo
	// Subset is the subset they are of, nil for any instance of the app.
	Subset *Subset
	// Answer, when its Status is not 0, is what the request gets: 503
	// for a subset without instances and fallback none.
	Answer Answer

	state *subsetState
	// region is the region of Instances as the balancer keys them
	// (regionList): a subset's remote region, "" for the local one.
	region string
}

// Select narrows instances, those of app (upper case) that may take a
// request (not empty), to the subset the traffic rules give the request
// (or a trusted proxy's RouteHeader names), following the app's fallback
// when that subset has none of them. target is the client's target, path
// the one the instance gets, name the app as the client wrote it (for
// the answer). Route calls it; a transport that routes otherwise (Caddy's
// eureka upstream source) calls it itself.
func (r *Router) Select(app string, instances []*eureka.InstanceInfo, req *Request, target, path, name []byte) Selection {
	sel := Selection{Instances: instances}
	rules := r.rules.Load()
	var a *appRules
	if rules != nil {
		a = rules.apps[app]
	}
	if req != nil && req.Trusted {
		if label, ok := req.field(balancer.RouteHeader); ok && label != "" {
			if sub := r.subsets.trusted(app, a, label); sub != nil && r.narrow(&sel, sub) {
				return sel
			}
		}
	}
	if a == nil {
		return sel
	}
	sub := a.decide(req, target, path)
	if sub != nil && r.narrow(&sel, sub) {
		return sel
	}
	switch {
	case sub == nil, a.fallback == FallbackAny, a.fallback == FallbackDefault && a.def == nil:
	case a.fallback == FallbackDefault && a.def != sub && r.narrow(&sel, a.def):
	case a.fallback == FallbackDefault:
		sel.Instances, sel.Answer = nil, emptySubset(name, a.def)
	default:
		sel.Instances, sel.Answer = nil, emptySubset(name, sub)
	}
	return sel
}

// narrow narrows sel to sub's instances when sub has any: of
// sel.Instances, or, for a subset of a region, of that region's.
func (r *Router) narrow(sel *Selection, sub *Subset) bool {
	base, region := sel.Instances, ""
	if sub.region != "" {
		// The port side of the list the route chose: a secure list has
		// no instance with its plain port enabled.
		base, region = r.regionList(sub.app, sub.region, len(base) > 0 && !base[0].Port.Enabled)
		if len(base) == 0 {
			return false
		}
	}
	list := sub.of(base)
	if len(list) == 0 {
		return false
	}
	st := r.subsets.of(sub)
	if st == nil {
		return false // rules replaced meanwhile
	}
	sel.Instances, sel.Subset, sel.state, sel.region = list, sub, st, region
	return true
}

// Again returns the instances of sub among instances, for a transport
// that asks for a request's instances more than once (Caddy's upstream
// source, on a retry): the subset Select gave it the first time, or, when
// it has none of them now, instances.
func (sub *Subset) Again(instances []*eureka.InstanceInfo) []*eureka.InstanceInfo {
	if sub == nil || len(instances) == 0 {
		return instances
	}
	if list := sub.of(instances); len(list) > 0 {
		return list
	}
	return instances
}

// Key returns the key a balancer policy keeps the subset's state under
// (balancer.Candidates.Key).
func (sub *Subset) Key() string { return sub.key }

// source returns where a subset's retries read its instances again.
func (st *subsetState) source(secure bool) balancer.Instancer {
	if secure {
		return &st.secure
	}
	return &st.plain
}
