package fxmodules

import (
	"context"
	"net/http"
	"slices"

	"github.com/eurekagate/eurekagate/registry/httpapi"
	"go.uber.org/fx"
	"go.uber.org/zap"
)

// Server runs the standalone fasthttp registry server over the Registry
// module's API, and the operator pages of the application (those of the
// Dashboard and Metrics modules) on the same listener, behind the API's
// credentials. It listens when the application starts (a bind error fails
// the start) and, when it stops, lets in-flight requests finish before
// returning. Supply a httpapi.ServerConfig to change the address (default
// ":8761").
var Server = fx.Module("eureka.server",
	namedLogger("eureka.server"),
	fx.Provide(NewServer),
	fx.Invoke(func(*httpapi.Server) {}),
)

// ServerParams are the dependencies of NewServer.
type ServerParams struct {
	fx.In

	Lifecycle fx.Lifecycle
	API       *httpapi.API
	Config    httpapi.ServerConfig `optional:"true"`
	Logger    *zap.Logger          `optional:"true"`
	// Pages are served on paths outside the API, in front of
	// Config.Other.
	Pages []Page `group:"eureka.pages"`
}

// NewServer builds the server and ties it to the lifecycle.
func NewServer(p ServerParams) *httpapi.Server {
	log := p.Logger
	if log == nil {
		log = zap.NewNop()
	}
	cfg := p.Config
	if cfg.Log == nil {
		cfg.Log = log
	}
	if len(p.Pages) > 0 {
		mux := http.NewServeMux()
		for _, page := range p.Pages {
			mux.Handle(page.Path, p.API.Protect(page.Handler))
		}
		if cfg.Other != nil && !slices.ContainsFunc(p.Pages, func(page Page) bool { return page.Path == "/" }) {
			mux.Handle("/", cfg.Other)
		}
		cfg.Other = mux
	}
	srv := httpapi.NewServer(p.API, cfg)
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
