package fxmodules

import (
	"context"
	"fmt"
	"net"

	"go.uber.org/fx"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/xds"
)

// XDSConfig configures the XDS module.
type XDSConfig struct {
	// Addr is the address the xDS server listens on (":18000"); required.
	Addr string
	// Server is the xDS server's settings; its zero value is xds's
	// defaults.
	Server xds.Config
}

// XDS provides an *xds.Server over the Store (the Registry module's),
// listening on XDSConfig.Addr from the application's start to its stop:
// Envoy and gRPC clients with an xDS resolver read the registry from it.
// Supply an XDSConfig.
var XDS = fx.Module("eureka.xds",
	fx.Provide(NewXDS),
	fx.Invoke(func(*xds.Server) {}),
)

// XDSParams are the dependencies of NewXDS.
type XDSParams struct {
	fx.In

	Lifecycle fx.Lifecycle
	Store     *registry.Store
	Config    XDSConfig
}

// NewXDS builds the xDS server and ties its listener to the lifecycle.
func NewXDS(p XDSParams) (*xds.Server, error) {
	if p.Config.Addr == "" {
		return nil, fmt.Errorf("xds: XDSConfig.Addr is empty: the server needs an address to listen on")
	}
	s, err := xds.New(p.Store, p.Config.Server)
	if err != nil {
		return nil, err
	}
	p.Lifecycle.Append(fx.Hook{
		OnStart: func(context.Context) error {
			ln, err := net.Listen("tcp", p.Config.Addr)
			if err != nil {
				return fmt.Errorf("xds: %w", err)
			}
			s.Start(ln)
			return nil
		},
		OnStop: func(context.Context) error {
			s.Stop()
			return nil
		},
	})
	return s, nil
}
