package fxmodules

import (
	"context"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/regions/feeds"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// RegistryConfig configures the Registry module. Its zero value is
// Eureka's defaults.
type RegistryConfig struct {
	// Store holds the lease, eviction, self-preservation and delta settings.
	Store registry.Config
	// API holds the REST API's path prefix and body size limit.
	API httpapi.APIConfig
	// Peers are the other nodes of a registry cluster. With peers, the
	// Store syncs from them when the application starts (before the server
	// module listens) and replicates its client writes to them. Unset,
	// Peers.MaxBatchBytes is API.MaxBatchBytes: a node sends batches no
	// larger than it takes itself.
	Peers replication.Config
	// PeersAlways builds the *replication.Peers even with no peer and no
	// DNS name, so that Peers.SetPeers may add some at run time (a peer
	// list re-read from a file, a Caddy reload). Default: false, no
	// replication without peers.
	PeersAlways bool
	// RemoteRegions are the remote regions the Store serves and the
	// service URLs they are read from (the Remotes), with how often and
	// with which TLS. A remote region named here and not in
	// Store.RemoteRegions is added to them, with no whitelist of its own;
	// list it there too to give it one. Default: none.
	RemoteRegions feeds.Config
}

// Registry provides a *registry.Store, whose background loops (eviction,
// delta retention, threshold recount) run between the application's start
// and stop; the *replication.Peers that keep it in step with the other
// nodes of a cluster (nil without peers); the *feeds.Feeds that read
// its remote regions (nil without RemoteRegions.Remotes); and the
// *httpapi.API over it. Supply a RegistryConfig to change the defaults.
var Registry = fx.Module("eureka.registry",
	namedLogger("eureka.registry"),
	fx.Provide(NewStore, NewPeers, NewRegions, NewAPI),
	// Replication and the remote regions' feeds run whether or not
	// anything asks for them.
	fx.Invoke(func(*replication.Peers, *feeds.Feeds) {}),
)

// StoreParams are the dependencies of NewStore.
type StoreParams struct {
	fx.In

	Lifecycle fx.Lifecycle
	Config    RegistryConfig `optional:"true"`
	Logger    *zap.Logger    `optional:"true"`
}

// NewStore builds the Store and ties its loops to the lifecycle. The Store
// logs to the module's logger unless the config names another. Its remote
// regions are Store.RemoteRegions and those of RemoteRegions.Remotes.
func NewStore(p StoreParams) *registry.Store {
	cfg := p.Config.Store
	if cfg.Logger == nil {
		cfg.Logger = p.Logger
	}
	cfg.RemoteRegions = withRemotes(cfg.RemoteRegions, p.Config.RemoteRegions.Remotes)
	s := registry.New(cfg)
	p.Lifecycle.Append(fx.StartStopHook(s.Start, s.Stop))
	return s
}

// PeersParams are the dependencies of NewPeers.
type PeersParams struct {
	fx.In

	Lifecycle fx.Lifecycle
	Store     *registry.Store
	Config    RegistryConfig `optional:"true"`
}

// NewPeers sets up replication to the configured peers and DNS names, or
// returns nil when there are none (unless PeersAlways). On start it starts sending and starts the start-up
// sync in the background (replication.Peers.StartSync): the servers
// listen meanwhile, answering reads 503 until it is done, since a sync of
// a large registry, or one that waits out its peers' errors, outlasts any
// start deadline.
func NewPeers(p PeersParams) (*replication.Peers, error) {
	if len(p.Config.Peers.Peers) == 0 && len(p.Config.Peers.PeersDNS) == 0 && !p.Config.PeersAlways {
		return nil, nil
	}
	cfg := p.Config.Peers
	if cfg.MaxBatchBytes == 0 {
		cfg.MaxBatchBytes = p.Config.API.MaxBatchBytes
	}
	peers, err := replication.New(p.Store, cfg)
	if err != nil {
		return nil, err
	}
	p.Lifecycle.Append(fx.Hook{
		OnStart: func(context.Context) error { peers.Start(); peers.StartSync(); return nil },
		OnStop:  func(context.Context) error { peers.Stop(); return nil },
	})
	return peers, nil
}

// APIParams are the dependencies of NewAPI.
type APIParams struct {
	fx.In

	Store  *registry.Store
	Peers  *replication.Peers `optional:"true"`
	Config RegistryConfig     `optional:"true"`
}

// NewAPI builds the REST API over the Store; /status reports the Peers,
// and reads are answered 503 until their start-up sync is done. It fails,
// and so does the application's start, on an authentication setting that
// would not work (httpapi.AuthConfig.Check).
func NewAPI(p APIParams) (*httpapi.API, error) {
	cfg := p.Config.API
	if err := cfg.Auth.Check(); err != nil {
		return nil, err
	}
	if p.Peers != nil {
		if cfg.Peers == nil {
			cfg.Peers = p.Peers
		}
		if cfg.Ready == nil {
			cfg.Ready = p.Peers.Synced() // reads wait for the start-up sync
		}
		if cfg.Applying == nil {
			cfg.Applying = p.Peers.Copied() // replicated writes wait for its copy
		}
	}
	return httpapi.NewAPI(p.Store, cfg), nil
}
