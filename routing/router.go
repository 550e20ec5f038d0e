package routing

import (
	"errors"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/perapp"
)

// Router decides, for every request a gateway gets, where it goes: which
// application it names, which of its instances takes it, at which port
// (plain or secure), with which path, and, after an instance fails it,
// whether it goes to another or which status and reason the client gets.
// Caddy's eureka_gateway, the fasthttp gateway and its event loops are
// transports around it: they carry the bytes and report the outcomes.
//
// It is safe for concurrent use. Route and Next allocate nothing on the
// way to an instance.
type Router struct {
	cfg    Config
	bal    *balancer.Balancer
	names  nameCache
	cache  perapp.Map[atomic.Pointer[routable]] // each app's last routable
	plain  *side                                // the routable instances at their plain port
	secure *side                                // at their secure port

	rules   atomic.Pointer[Rules]
	subsets subsetStates
	regions *regions // nil: no FailoverRegions
	// regionCache is each region's routable lists, for fail-over and the
	// subsets of a region, by region, then app.
	regionCache perapp.Map[perapp.Map[atomic.Pointer[routable]]]
	guards      perapp.Map[guardSlot] // each app's breaker and retry budget
}

// New returns a Router over cfg.Instances. It starts nothing.
func New(cfg Config) (*Router, error) {
	cfg, err := cfg.complete()
	if err != nil {
		return nil, err
	}
	r := &Router{cfg: cfg, bal: cfg.Balancer}
	r.plain, r.secure = &side{r: r}, &side{r: r, secure: true}
	r.subsets.r = r
	if len(cfg.FailoverRegions) > 0 {
		in, ok := cfg.Instances.(RegionInstancer)
		if !ok {
			return nil, errors.New("routing: FailoverRegions needs Instances that answer for other regions (InstancesIn)")
		}
		r.regions = &regions{in: in, names: cfg.FailoverRegions}
	}
	r.SetRules(cfg.Rules)
	return r, nil
}

// Config returns the Router's configuration, its defaults filled in: the
// timeouts the transports apply.
func (r *Router) Config() Config { return r.cfg }

// A Route is the decision for one request.
type Route struct {
	// Other is true when the request names no application ("/"): the
	// transport serves it otherwise (Caddy's next handler, a 404).
	Other bool
	// Answer, when its Status is not 0, is what the request gets instead
	// of being proxied: 503 for an application that cannot take it.
	Answer Answer

	// App is the application, upper case as Eureka stores it.
	App string
	// Registered says the registry has the application (with or without
	// UP instances): the name is one of the registry's, which metrics may
	// use as a label.
	Registered bool
	// Secure says the instances are reached on their secure port, over
	// TLS: none of them enables its plain port.
	Secure bool
	// Instances are the instances that may take the request.
	Instances []*eureka.InstanceInfo
	// Subset, when not nil, is the subset of the app's instances that
	// traffic rules (or a trusted proxy's RouteHeader) gave the request:
	// Instances are of it. The transport tells the instance in
	// balancer.RouteHeader, with Subset.Label.
	Subset *Subset
	// Region, when not "", is the remote region (one of FailoverRegions)
	// whose instances take the request, because the local region has
	// none that can: the transport tells the instance in RegionHeader.
	Region string
	// Limit, when Router.Limit made the Answer a rate limit's 429, is
	// that limit: the transport sets its Headers on the answer.
	Limit Limited
	// Guard, when Router.Limit let the request through its app's circuit
	// breaker or retry budget, is its pass: the transport ends it once
	// (traffic.Observed does).
	Guard Guard

	state *subsetState
	// subsetRegion is the region of a region subset's instances as the
	// balancer keys them (Selection.region): "" for the local one.
	subsetRegion string
}

// Route decides where a request for target goes. target is the request's
// origin-form target as the client sent it (path and query, escaped),
// checked with CheckTarget; req is what the traffic rules read of it (nil:
// the rules see a request with no header, which goes to the default
// subsets). Route also returns the application's name as
// the client wrote it, and the target the instance gets: the rest of the
// client's, from its first slash ("/" when it had none). They point into
// target or into dst, where dot segments are resolved; the Route holds
// neither, so that a caller's buffers stay on its stack.
func (r *Router) Route(dst, target []byte, req *Request) (rt Route, name, path []byte) {
	clean := target
	if HasDotSegment(target) {
		clean = RemoveDotSegments(dst[:0], target)
		dst = clean[len(clean):]
	}
	name, rest, ok := SplitApp(clean)
	if !ok {
		return Route{Other: true}, nil, nil
	}
	path = rest
	if len(rest) == 0 || rest[0] != '/' {
		path = append(append(dst[:0], '/'), rest...)
	}
	app, cached := r.names.upper(name)
	rt.App = app
	up := r.cfg.Instances.Instances(app)
	var list []*eureka.InstanceInfo
	var secure, healthy bool
	if len(up) > 0 {
		list, secure, healthy = r.routable(app, up)
	}
	if len(list) == 0 && r.regions != nil {
		if rl, rs, region := r.failover(app); region != "" {
			list, secure, healthy, rt.Region = rl, rs, true, region
		}
	}
	if len(up) == 0 && rt.Region == "" {
		rt.Registered = r.registered(app)
		rt.Answer = unavailable(rt.Registered, name)
		return rt, name, path
	}
	rt.Registered = true
	if !cached {
		r.names.remember(name, app)
	}
	switch {
	case !healthy:
		rt.Answer = unhealthy(name)
	case len(list) == 0:
		rt.Answer = noPort(name)
	default:
		rt.Secure = secure
		sel := r.Select(app, list, req, target, path, name)
		rt.Instances, rt.Subset, rt.Answer, rt.state, rt.subsetRegion = sel.Instances, sel.Subset, sel.Answer, sel.state, sel.region
	}
	return rt, name, path
}

// Retry returns the attempts of a routed request on the route's
// instances. resendable says the request may be sent twice: its method
// is idempotent (balancer.Idempotent) and its body is none or in memory.
func (r *Router) Retry(rt *Route, resendable bool) balancer.Retry {
	try := r.bal.Retry(rt.App, rt.Instances, r.cfg.Retries, resendable)
	try.Region = rt.InstanceRegion()
	if g := rt.Guard.g; g != nil && g.budget != nil {
		try.Budget = g
	}
	switch {
	case rt.state != nil:
		try.Source, try.Key = rt.state.source(rt.Secure), rt.Subset.key
	case rt.Secure:
		try.Source = r.secure
	default:
		try.Source = r.plain
	}
	return try
}

// InstanceRegion returns the region of the route's instances as the
// balancer and the traffic counters key them: "" for the local region,
// else the remote region the route fails over to (Region) or the remote
// region its subset names (a subset naming the local region is keyed as
// the local one: regionList decides). An instance's passive health,
// calls in flight and counters are its app's, region's and id's, so that
// another region's instance of the same id is never taken for it.
func (rt *Route) InstanceRegion() string {
	if rt.Subset != nil && rt.Subset.region != "" {
		return rt.subsetRegion
	}
	return rt.Region
}

// registered reports whether app has instances, whatever their status.
func (r *Router) registered(app string) bool {
	all, ok := r.cfg.Instances.(AllInstancer)
	return ok && len(all.AllInstances(app)) > 0
}

// healthy returns the instances of list passing their health check; a
// remote region's list is not the Checker's (it checks the local
// region's instances), and passes whole.
func (r *Router) healthy(app string, list []*eureka.InstanceInfo, remote bool) []*eureka.InstanceInfo {
	if r.cfg.Health == nil || remote {
		return list
	}
	return r.cfg.Health.Filter(app, list)
}

// AllInstancer is what an Instancer may also have (balancer's, declared
// there, the low package): every instance of app whatever its status.
type AllInstancer = balancer.AllInstancer

// side is the instances a route takes after a failure: those passing their
// health check that enable the plain port, or the secure one.
type side struct {
	r      *Router
	secure bool
}

func (s *side) Instances(app string) []*eureka.InstanceInfo {
	up := s.r.cfg.Instances.Instances(app)
	var list []*eureka.InstanceInfo
	var secure bool
	if len(up) > 0 {
		list, secure, _ = s.r.routable(app, up)
	}
	if len(list) == 0 {
		// The local region has none (left meanwhile, or never had): the
		// retries follow the route to the fail-over region.
		list, secure, _ = s.r.failover(app)
	}
	if secure != s.secure {
		return nil // the app moved to the other port meanwhile
	}
	return list
}

// Enabled returns the instances of list that enable their secure port
// (secure) or their plain one: list itself when all of them do, which is
// the usual case and allocates nothing.
func Enabled(list []*eureka.InstanceInfo, secure bool) []*eureka.InstanceInfo {
	n := 0
	for _, i := range list {
		if enabled(i, secure) {
			n++
		}
	}
	if n == len(list) {
		return list
	}
	if n == 0 {
		return nil
	}
	out := make([]*eureka.InstanceInfo, 0, n)
	for _, i := range list {
		if enabled(i, secure) {
			out = append(out, i)
		}
	}
	return out
}

func enabled(i *eureka.InstanceInfo, secure bool) bool {
	if secure {
		return i.SecurePort.Enabled
	}
	return i.Port.Enabled
}
