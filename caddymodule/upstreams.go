package caddymodule

import (
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
)

func init() {
	caddy.RegisterModule(new(Upstreams))
}

// serviceVar is the request variable that tells the eureka selection
// policies which application the upstreams belong to. It is also readable as the
// placeholder {http.vars.eureka.service}.
const serviceVar = "eureka.service"

// instancesVar is the request variable that holds the instances behind the
// upstreams GetUpstreams returned, in the same order, so that the eureka
// selection policies can read their metadata.
const instancesVar = "eureka.instances"

// Upstreams is a dynamic upstream source for reverse_proxy: the UP
// instances of an application in the eureka app's registry (or, in remote
// mode, its discovery client's copy of the remote registry). It reads an
// immutable snapshot, so it takes no lock and does no I/O per request, and
// a registration is routable on the very next request. With the eureka
// app's active health checks on (health_interval), it leaves out the
// instances failing them: Caddy's own active health checks do not cover
// dynamic upstreams. Pair it with lb_policy eureka_round_robin for
// per-application round-robin, or eureka_least_requests.
type Upstreams struct {
	// Service is the application name, matched case-insensitively.
	// Placeholders are expanded per request, such as {http.vars.service}.
	Service string `json:"service,omitempty"`
	// Secure takes the instances that enable their secure port, at that
	// port; pair it with reverse_proxy's transport http { tls }. Default:
	// the instances that enable their plain port, at that port.
	Secure bool `json:"secure,omitempty"`
	// The traffic rules: which subset of the service's instances a
	// request gets as its upstreams. The instance is told in
	// X-Eurekagate-Route (and the placeholder {http.vars.eureka.route}
	// holds it), and the eureka selection policies take turns within the
	// subset. A client's X-Eurekagate-Route is removed unless Caddy
	// trusts it as a proxy (trusted_proxies). Default: none.
	TrafficRules

	app    *App
	router *routing.Router
}

// routeVar is the request variable that holds the subset the traffic
// rules chose, as text ("" for any instance): the placeholder
// {http.vars.eureka.route}.
const routeVar = "eureka.route"

// subsetVar holds the request's decision (a decided), so that a retry
// keeps the subset the first attempt got.
const subsetVar = "eureka.subset"

type decided struct{ sub *routing.Subset }

// CaddyModule returns the Caddy module information.
func (*Upstreams) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.reverse_proxy.upstreams.eureka", New: func() caddy.Module { return new(Upstreams) }}
}

// Provision finds the eureka app.
func (u *Upstreams) Provision(ctx caddy.Context) error {
	if u.Service == "" {
		return fmt.Errorf("eureka upstreams: service is required")
	}
	app, err := eurekaApp(ctx)
	if err != nil {
		return err
	}
	u.app = app
	rules, err := u.TrafficRules.load("eureka upstreams")
	if err != nil {
		return err
	}
	if rules.Limited() {
		// reverse_proxy takes the request before the router could refuse it.
		return fmt.Errorf("eureka upstreams: %s: rate limits (limits) are decided by eureka_gateway, not by the eureka upstream source: route through eureka_gateway or remove them", rules.Source())
	}
	if rules.Guarded() {
		return fmt.Errorf("eureka upstreams: %s: circuit breakers and retry budgets (breaker, retry_budget) are decided by eureka_gateway, not by the eureka upstream source: route through eureka_gateway or remove them", rules.Source())
	}
	// The router only selects subsets here: reverse_proxy picks and
	// reaches the instance.
	u.router, err = routing.New(routing.Config{Instances: app.entry.instances, Health: app.checker, Rules: rules})
	return err
}

// GetUpstreams returns new Upstream values for the service's UP instances
// that enable the port asked for (plain, or secure with Secure), in the
// registry's stable order (by instance id), leaving out those failing the
// eureka app's active health checks (health_interval), narrowed to the
// subset the traffic rules give the request. It leaves the service name,
// the instances and the subset in the request for the eureka selection
// policies.
func (u *Upstreams) GetUpstreams(r *http.Request) ([]*reverseproxy.Upstream, error) {
	service := u.Service
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		service = repl.ReplaceAll(service, "")
	}
	service = eureka.AppName(service) // ASCII only, as the gateways match names
	caddyhttp.SetVar(r.Context(), serviceVar, service)
	list := u.app.Instances(service)
	if len(list) > 0 {
		list = routing.Enabled(u.app.routable(service, list), u.Secure)
	}
	if len(list) > 0 {
		list = u.subset(r, service, list)
	}
	caddyhttp.SetVar(r.Context(), instancesVar, list)
	out := make([]*reverseproxy.Upstream, len(list))
	for n, inst := range list {
		out[n] = &reverseproxy.Upstream{Dial: balancer.Address(inst, u.Secure)}
	}
	return out, nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Upstreams)(nil)
	_ reverseproxy.UpstreamSource = (*Upstreams)(nil)
)

// subset narrows list, the service's instances, to the subset the rules
// give r: decided on the first attempt, kept on retries.
func (u *Upstreams) subset(r *http.Request, service string, list []*eureka.InstanceInfo) []*eureka.InstanceInfo {
	if d, ok := caddyhttp.GetVar(r.Context(), subsetVar).(decided); ok {
		return d.sub.Again(list)
	}
	rr := ruleRequest(r)
	target := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	sel := u.router.Select(service, list, &rr, []byte(target), []byte(target), []byte(service))
	caddyhttp.SetVar(r.Context(), subsetVar, decided{sel.Subset})
	setRoute(r.Header, sel.Subset, nil)
	setRegion(r.Header, "", nil) // the upstream source routes in the local region only
	label := ""
	if sel.Subset != nil {
		label = sel.Subset.Label()
		caddyhttp.SetVar(r.Context(), subsetKeyVar, sel.Subset.Key())
	}
	caddyhttp.SetVar(r.Context(), routeVar, label)
	return sel.Instances // none with fallback none: Caddy answers 503
}
