package fxmodules

import (
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/discovery"
)

// Discovery provides a *discovery.Client that registers the configured
// instance (if any) and starts fetching the registry when the application
// starts, and cancels the registration when it stops. Supply a
// discovery.Config; without one the client fetches from
// http://localhost:8761/eureka/ and registers nothing.
var Discovery = fx.Module("eureka.discovery",
	namedLogger("eureka.discovery"),
	fx.Provide(NewDiscovery),
)

// DiscoveryParams are the dependencies of NewDiscovery.
type DiscoveryParams struct {
	fx.In

	Lifecycle fx.Lifecycle
	Config    discovery.Config `optional:"true"`
	Logger    *zap.Logger      `optional:"true"`
}

// NewDiscovery builds the client and ties it to the lifecycle. Its start
// does not wait for the network; Stop waits for the client's goroutines
// and the cancel request.
func NewDiscovery(p DiscoveryParams) (*discovery.Client, error) {
	cfg := p.Config
	if cfg.Logger == nil {
		cfg.Logger = p.Logger
	}
	c, err := discovery.New(cfg)
	if err != nil {
		return nil, err
	}
	p.Lifecycle.Append(fx.StartStopHook(c.Start, c.Stop))
	return c, nil
}
