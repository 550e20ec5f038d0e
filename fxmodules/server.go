package fxmodules

import (
	"context"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/registry"
)

// Server runs the standalone fasthttp registry server over the Registry
// module's API. It listens when the application starts (a bind error fails
// the start) and, when it stops, lets in-flight requests finish before
// returning. Supply a registry.ServerConfig to change the address (default
// ":8761").
var Server = fx.Module("eureka.server",
	namedLogger("eureka.server"),
	fx.Provide(NewServer),
	fx.Invoke(func(*registry.Server) {}),
)

// ServerParams are the dependencies of NewServer.
type ServerParams struct {
	fx.In

	Lifecycle fx.Lifecycle
	API       *registry.API
	Config    registry.ServerConfig `optional:"true"`
	Logger    *zap.Logger           `optional:"true"`
}

// NewServer builds the server and ties it to the lifecycle.
func NewServer(p ServerParams) *registry.Server {
	log := p.Logger
	if log == nil {
		log = zap.NewNop()
	}
	srv := registry.NewServer(p.API, p.Config)
	p.Lifecycle.Append(fx.Hook{
		OnStart: func(context.Context) error {
			if err := srv.Start(); err != nil {
				return err
			}
			log.Info("registry listening", zap.Stringer("addr", srv.Addr()))
			return nil
		},
		OnStop: srv.Stop,
	})
	return srv
}
