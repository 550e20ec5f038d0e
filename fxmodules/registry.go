package fxmodules

import (
	"context"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/registry"
)

// RegistryConfig configures the Registry module. Its zero value is
// Eureka's defaults.
type RegistryConfig struct {
	// Store holds the lease, eviction, self-preservation and delta settings.
	Store registry.Config
	// API holds the REST API's path prefix and body size limit.
	API registry.APIConfig
}

// Registry provides a *registry.Store, whose background loops (eviction,
// delta retention, threshold recount) run between the application's start
// and stop, and the *registry.API over it. Supply a RegistryConfig to change
// the defaults.
var Registry = fx.Module("eureka.registry",
	namedLogger("eureka.registry"),
	fx.Provide(NewStore, NewAPI),
)

// StoreParams are the dependencies of NewStore.
type StoreParams struct {
	fx.In

	Lifecycle fx.Lifecycle
	Config    RegistryConfig `optional:"true"`
	Logger    *zap.Logger    `optional:"true"`
}

// NewStore builds the Store and ties its loops to the lifecycle. The Store
// logs to the module's logger unless the config names another.
func NewStore(p StoreParams) *registry.Store {
	cfg := p.Config.Store
	if cfg.Logger == nil {
		cfg.Logger = p.Logger
	}
	s := registry.New(cfg)
	p.Lifecycle.Append(fx.Hook{
		OnStart: func(context.Context) error { s.Start(); return nil },
		OnStop:  func(context.Context) error { s.Stop(); return nil },
	})
	return s
}

// APIParams are the dependencies of NewAPI.
type APIParams struct {
	fx.In

	Store  *registry.Store
	Config RegistryConfig `optional:"true"`
}

// NewAPI builds the REST API over the Store.
func NewAPI(p APIParams) *registry.API {
	return registry.NewAPI(p.Store, p.Config.API)
}
