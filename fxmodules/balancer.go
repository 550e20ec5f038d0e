package fxmodules

import (
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
)

// Balancer provides a *balancer.Balancer over the balancer.Instancer in the
// application: add LocalInstances to balance over an embedded registry, or
// RemoteInstances to balance over the discovery client's cache. Supply a
// balancer.Config to change the policy (default per-app round-robin), as
// in fx.Supply(balancer.Config{Policy: new(balancer.LeastRequests)}).
//
// Supply a *balancer.CheckConfig to turn on active health checks, as in
// fx.Supply(&balancer.CheckConfig{Interval: 10 * time.Second}): the module
// then makes a balancer.Checker for the balancer, starts it with the
// application and stops it, waiting for its checks, when the application
// stops.
var Balancer = fx.Module("eureka.balancer",
	namedLogger("eureka.balancer"),
	fx.Provide(NewBalancer),
)

// LocalInstances makes the Registry module's Store the balancer's source:
// with remote regions, through regions.InstancesOf, which answers for them
// in fail-over; without, the Store itself, with no call between.
var LocalInstances = fx.Provide(func(s *registry.Store) balancer.Instancer {
	if len(s.Config().RemoteRegions) == 0 {
		return s
	}
	return regions.InstancesOf(s)
})

// RemoteInstances makes the Discovery module's client the balancer's source.
var RemoteInstances = fx.Provide(func(c *discovery.Client) balancer.Instancer { return c })

// BalancerParams are the dependencies of NewBalancer.
type BalancerParams struct {
	fx.In

	Lifecycle   fx.Lifecycle
	Instances   balancer.Instancer
	Config      balancer.Config       `optional:"true"`
	HealthCheck *balancer.CheckConfig `optional:"true"`
	Logger      *zap.Logger           `optional:"true"`
}

// NewBalancer builds the balancer and, with a HealthCheck config (and no
// Checker in Config), its Checker, tied to the lifecycle. The Checker logs
// to the module's logger unless its config names another.
func NewBalancer(p BalancerParams) *balancer.Balancer {
	cfg := p.Config
	if p.HealthCheck != nil && cfg.Checker == nil {
		hc := *p.HealthCheck
		if hc.Logger == nil {
			hc.Logger = p.Logger
		}
		checker := balancer.NewChecker(p.Instances, hc)
		p.Lifecycle.Append(fx.StartStopHook(checker.Start, checker.Stop))
		cfg.Checker = checker
	}
	return balancer.New(p.Instances, cfg)
}
