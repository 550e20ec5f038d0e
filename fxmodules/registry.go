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
	// Peers are the other nodes of a registry cluster. With peers, the
	// Store syncs from them when the application starts (before the server
	// module listens) and replicates its client writes to them.
	Peers registry.PeerConfig
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

// NewStore builds the Store and ties its loops, and its replication to
// peers if any, to the lifecycle. The Store logs to the module's logger
// unless the config names another.
func NewStore(p StoreParams) (*registry.Store, error) {
	cfg := p.Config.Store
	if cfg.Logger == nil {
		cfg.Logger = p.Logger
	}
	s := registry.New(cfg)
	p.Lifecycle.Append(fx.Hook{
		OnStart: func(context.Context) error { s.Start(); return nil },
		OnStop:  func(context.Context) error { s.Stop(); return nil },
	})
	if len(p.Config.Peers.Peers) == 0 {
		return s, nil
	}
	peers, err := registry.NewPeers(s, p.Config.Peers)
	if err != nil {
		return nil, err
	}
	p.Lifecycle.Append(fx.Hook{
		// The sync must finish before the registry answers reads; it is
		// bounded by the start deadline.
		OnStart: func(ctx context.Context) error { peers.SyncFrom(ctx); peers.Start(); return nil },
		OnStop:  func(context.Context) error { peers.Stop(); return nil },
	})
	return s, nil
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
