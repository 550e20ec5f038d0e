package fxmodules

import (
	"go.uber.org/fx"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/registry"
)

// Balancer provides a *balancer.Balancer over the balancer.Instancer in the
// application: add LocalInstances to balance over an embedded registry, or
// RemoteInstances to balance over the discovery client's cache. Supply a
// balancer.Config to change the policy (default per-app round-robin), as
// in fx.Supply(balancer.Config{Policy: new(balancer.LeastRequests)}).
var Balancer = fx.Module("eureka.balancer",
	namedLogger("eureka.balancer"),
	fx.Provide(NewBalancer),
)

// LocalInstances makes the Registry module's Store the balancer's source.
var LocalInstances = fx.Provide(func(s *registry.Store) balancer.Instancer { return s })

// RemoteInstances makes the Discovery module's client the balancer's source.
var RemoteInstances = fx.Provide(func(c *discovery.Client) balancer.Instancer { return c })

// BalancerParams are the dependencies of NewBalancer.
type BalancerParams struct {
	fx.In

	Instances balancer.Instancer
	Config    balancer.Config `optional:"true"`
}

// NewBalancer builds the balancer.
func NewBalancer(p BalancerParams) *balancer.Balancer { return balancer.New(p.Instances, p.Config) }
