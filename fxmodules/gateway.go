package fxmodules

import (
	"context"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/gateway"
)

// Gateway serves the fasthttp gateway (package gateway): a request for
// /<app>/<rest> goes to /<rest> on an UP instance of <app>. It routes by
// the balancer.Instancer in the application: add LocalInstances to route
// by the Registry module's Store (registry and gateway in one process), or
// RemoteInstances to route by the Discovery module's copy of a remote
// registry. It provides the *gateway.Gateway and its *gateway.Server,
// which listens when the application starts (a bind error fails the
// start) and, when it stops, lets in-flight requests finish before the
// gateway closes its connections. It routes with the application's
// *balancer.Balancer when there is one (the Balancer module: supply a
// *balancer.CheckConfig there, and an application whose instances all
// fail their health check is answered 503). Supply a gateway.Config to
// change the routing (its Routing.Instances is filled in) and a
// gateway.ServerConfig to change the address (default ":8080").
var Gateway = fx.Module("eureka.gateway",
	namedLogger("eureka.gateway"),
	fx.Provide(NewGateway),
	fx.Invoke(func(*gateway.Server) {}),
)

// GatewayParams are the dependencies of NewGateway.
type GatewayParams struct {
	fx.In

	Lifecycle    fx.Lifecycle
	Instances    balancer.Instancer
	Balancer     *balancer.Balancer   `optional:"true"`
	Config       gateway.Config       `optional:"true"`
	ServerConfig gateway.ServerConfig `optional:"true"`
	Logger       *zap.Logger          `optional:"true"`
}

// NewGateway builds the gateway and its server and ties them to the
// lifecycle. The gateway logs to the module's logger unless the config
// names another.
func NewGateway(p GatewayParams) (*gateway.Gateway, *gateway.Server, error) {
	cfg := p.Config
	cfg.Routing.Instances = p.Instances
	if cfg.Routing.Balancer == nil {
		cfg.Routing.Balancer = p.Balancer
	}
	log := p.Logger
	if log == nil {
		log = zap.NewNop()
	}
	if cfg.Logger == nil {
		cfg.Logger = log
	}
	g, err := gateway.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	srv := gateway.NewServer(g, p.ServerConfig)
	p.Lifecycle.Append(fx.Hook{
		OnStart: func(context.Context) error {
			if err := srv.Start(); err != nil {
				g.Close()
				return err
			}
			log.Info("gateway listening", zap.Stringer("addr", srv.Addr()))
			return nil
		},
		OnStop: func(ctx context.Context) error {
			err := srv.Stop(ctx)
			g.Close()
			return err
		},
	})
	return g, srv, nil
}
