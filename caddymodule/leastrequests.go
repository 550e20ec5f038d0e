package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/eurekagate/eurekagate/balancer"
)

func init() {
	caddy.RegisterModule(new(LeastRequests))
}

// LeastRequests is a selection policy that takes the available upstream of
// the request's application with the fewest requests in flight (Caddy's
// own count, shared by every handler that proxies to the address), and
// among those that tie, the next in turn with one counter per application.
// Where Caddy's least_conn breaks ties at random, this one is round-robin
// when requests do not overlap. It skips upstreams that passive health
// checks or max_requests mark unavailable. It is balancer.LeastRequests,
// with counters kept with the registry across reloads.
//
// The application is the one the eureka upstream source resolved for the
// request; behind other upstream sources every request shares one counter.
type LeastRequests struct {
	policy balancer.Policy
}

// CaddyModule returns the Caddy module information.
func (*LeastRequests) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.reverse_proxy.selection_policies.eureka_least_requests",
		New: func() caddy.Module { return new(LeastRequests) },
	}
}

// Provision finds the eureka app's least-requests counters.
func (lr *LeastRequests) Provision(ctx caddy.Context) error {
	app, err := eurekaApp(ctx)
	if err != nil {
		return err
	}
	lr.policy = app.entry.leastRequests
	return nil
}

// Select returns the available upstream of the request's application with
// the fewest requests in flight.
func (lr *LeastRequests) Select(pool reverseproxy.UpstreamPool, r *http.Request, _ http.ResponseWriter) *reverseproxy.Upstream {
	return selectUpstream(lr.policy, pool, r)
}

// Interface guards
var (
	_ caddy.Provisioner     = (*LeastRequests)(nil)
	_ reverseproxy.Selector = (*LeastRequests)(nil)
)
