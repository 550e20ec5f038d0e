package caddymodule

import (
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
)

func init() {
	caddy.RegisterModule(new(RoundRobin))
}

// RoundRobin is a selection policy that takes an application's upstreams in
// turn with one counter per application, where Caddy's round_robin shares
// one counter between every service a placeholder routes to. It skips
// upstreams that Caddy's passive health checks (fail_duration, max_fails)
// or max_requests mark unavailable, so a dead instance is skipped before
// its lease expires, and like round_robin it spends a turn on each
// upstream it skips, so the others share its calls evenly. It is
// balancer.RoundRobin with the counters of the eureka app's balancer,
// which survive reloads with the registry.
//
// The application is the one the eureka upstream source resolved for the
// request; behind other upstream sources every request shares one counter.
type RoundRobin struct {
	policy balancer.Policy
}

// CaddyModule returns the Caddy module information.
func (*RoundRobin) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.reverse_proxy.selection_policies.eureka_round_robin",
		New: func() caddy.Module { return new(RoundRobin) },
	}
}

// Provision finds the eureka app's round-robin counters.
func (rr *RoundRobin) Provision(ctx caddy.Context) error {
	app, err := eurekaApp(ctx)
	if err != nil {
		return err
	}
	rr.policy = app.entry.roundRobin
	return nil
}

// Select returns the next available upstream of the request's application.
func (rr *RoundRobin) Select(pool reverseproxy.UpstreamPool, r *http.Request, _ http.ResponseWriter) *reverseproxy.Upstream {
	return selectUpstream(rr.policy, pool, r)
}

// eurekaApp returns the config's eureka app.
func eurekaApp(ctx caddy.Context) (*App, error) {
	v, err := ctx.App("eureka")
	if err != nil {
		return nil, fmt.Errorf("loading eureka app: %v", err)
	}
	return v.(*App), nil
}

// subsetKeyVar holds the balancer key of the subset the eureka upstream
// source's rules chose (routing.Subset.Key), so that each subset takes its
// turns apart.
const subsetKeyVar = "eureka.subset_key"

// selectUpstream asks policy for one of pool's available upstreams. The
// candidates carry the request's application, the instances behind the
// upstreams when the eureka upstream source made the pool, and Caddy's
// count of each upstream's requests in flight.
func selectUpstream(policy balancer.Policy, pool reverseproxy.UpstreamPool, r *http.Request) *reverseproxy.Upstream {
	if len(pool) == 0 {
		return nil
	}
	service, _ := caddyhttp.GetVar(r.Context(), serviceVar).(string)
	instances, _ := caddyhttp.GetVar(r.Context(), instancesVar).([]*eureka.InstanceInfo)
	c := balancer.NewCandidates(service, len(pool), instances,
		func(i int) bool { return pool[i].Available() },
		func(i int) int { return pool[i].NumRequests() })
	c.Key, _ = caddyhttp.GetVar(r.Context(), subsetKeyVar).(string)
	i, ok := policy.Choose(c)
	if !ok {
		return nil
	}
	return pool[i]
}

// Interface guards
var (
	_ caddy.Provisioner     = (*RoundRobin)(nil)
	_ reverseproxy.Selector = (*RoundRobin)(nil)
)
