// Package xdsmodule is the fx module of the xDS server, apart from
// fxmodules so that what does not serve xDS (the other fx modules) does
// not link go-control-plane and Envoy's types.
package xdsmodule

import (
	"context"
	"fmt"
	"net"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/fxmodules"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/xds"
)

// Config configures the Module.
type Config struct {
	// Addr is the address the xDS server listens on (":18000"); required.
	Addr string
	// Server is the xDS server's settings; its zero value is xds's
	// defaults.
	Server xds.Config
	// Rules is a traffic rules file the server serves to gRPC clients
	// (xds.Server.SetRules), read as the Gateway module reads it: a
	// document that does not parse fails the start with its file and
	// line, and the file is checked every Interval from the start to the
	// stop. Default: none, every RPC goes to its app's whole cluster.
	Rules fxmodules.GatewayRules
}

// Module provides an *xds.Server over the Store (fxmodules.Registry's),
// listening on Config.Addr from the application's start to its stop:
// Envoy and gRPC clients with an xDS resolver read the registry from it.
// Supply a Config.
var Module = fx.Module("eureka.xds",
	fx.Provide(New),
	fx.Invoke(func(*xds.Server) {}),
)

// Params are the dependencies of New.
type Params struct {
	fx.In

	Lifecycle fx.Lifecycle
	Store     *registry.Store
	Config    Config
	Logger    *zap.Logger `optional:"true"`
}

// New builds the xDS server and ties its listener to the lifecycle.
func New(p Params) (*xds.Server, error) {
	if p.Config.Addr == "" {
		return nil, fmt.Errorf("xds: Config.Addr is empty: the server needs an address to listen on")
	}
	cfg := p.Config.Server
	if cfg.Logger == nil {
		cfg.Logger = p.Logger
	}
	s, err := xds.New(p.Store, cfg)
	if err != nil {
		return nil, err
	}
	if r := p.Config.Rules; r.File != "" {
		rf, err := routing.NewRulesFile(routing.RulesFileConfig{Path: r.File, Apply: s.SetRules, Interval: r.Interval, Limits: r.Limits, Logger: p.Logger})
		if err != nil {
			return nil, err
		}
		p.Lifecycle.Append(fx.StartStopHook(rf.Start, rf.Close))
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
