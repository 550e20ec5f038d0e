package caddymodule

import (
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/eurekagate/eurekagate/balancer"
)

func init() {
	caddy.RegisterModule(new(RoundRobin))
}

// RoundRobin is a selection policy that takes an application's upstreams in
// turn with one counter per application, where Caddy's round_robin shares
// one counter between every service a placeholder routes to. It skips
// upstreams that Caddy's passive health checks (fail_duration, max_fails)
// or max_requests mark unavailable, so a dead instance is skipped before
// its lease expires. The counters are the eureka app's balancer's, and
// survive reloads with the registry.
//
// The application is the one the eureka upstream source resolved for the
// request; behind other upstream sources every request shares one counter.
type RoundRobin struct {
	balancer *balancer.Balancer
}

// CaddyModule returns the Caddy module information.
func (*RoundRobin) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.reverse_proxy.selection_policies.eureka_round_robin",
		New: func() caddy.Module { return new(RoundRobin) },
	}
}

// Provision finds the eureka app's balancer.
func (rr *RoundRobin) Provision(ctx caddy.Context) error {
	v, err := ctx.App("eureka")
	if err != nil {
		return fmt.Errorf("loading eureka app: %v", err)
	}
	rr.balancer = v.(*App).Balancer()
	return nil
}

// Select returns the next available upstream of the request's application.
func (rr *RoundRobin) Select(pool reverseproxy.UpstreamPool, r *http.Request, _ http.ResponseWriter) *reverseproxy.Upstream {
	if len(pool) == 0 {
		return nil
	}
	service, _ := caddyhttp.GetVar(r.Context(), serviceVar).(string)
	idx, ok := rr.balancer.Next(service, len(pool), func(i int) bool { return pool[i].Available() })
	if !ok {
		return nil
	}
	return pool[idx]
}

// Interface guards
var (
	_ caddy.Provisioner     = (*RoundRobin)(nil)
	_ reverseproxy.Selector = (*RoundRobin)(nil)
)
