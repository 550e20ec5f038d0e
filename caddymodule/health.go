package caddymodule

import (
	"cmp"
	"slices"

	"github.com/eurekagate/eurekagate/balancer"
)

// gatewaysOut is what eureka_dashboard shows of the instances the
// eureka_gateway handlers of one registry keep out of rotation: the
// ejections of each of their balancers (one per passive-health setting)
// and the failing health checks of the running config's checker. It is
// the dashboard's Health, read-only.
type gatewaysOut struct{ e *entry }

// Ejected returns the instances some eureka_gateway balancer has ejected;
// an instance ejected by two, the one ejected the longest.
func (g gatewaysOut) Ejected() []balancer.Ejection {
	g.e.gatewaysMu.Lock()
	bs := make([]*balancer.Balancer, 0, len(g.e.gateways))
	for _, b := range g.e.gateways {
		bs = append(bs, b)
	}
	g.e.gatewaysMu.Unlock()
	type key struct{ app, region, id string }
	byKey := map[key]balancer.Ejection{}
	for _, b := range bs {
		for _, x := range b.Ejected() {
			k := key{x.App, x.Region, x.ID}
			if old, ok := byKey[k]; !ok || x.Since.Before(old.Since) {
				byKey[k] = x
			}
		}
	}
	out := make([]balancer.Ejection, 0, len(byKey))
	for _, x := range byKey {
		out = append(out, x)
	}
	slices.SortFunc(out, func(x, y balancer.Ejection) int {
		return cmp.Or(cmp.Compare(x.App, y.App), cmp.Compare(x.Region, y.Region), cmp.Compare(x.ID, y.ID))
	})
	return out
}

// Failing returns the instances failing the running config's active
// health check, none without one.
func (g gatewaysOut) Failing() []balancer.CheckFailure {
	if c := g.e.checker.Load(); c != nil {
		return c.Failing()
	}
	return nil
}
