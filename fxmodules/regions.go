package fxmodules

import (
	"slices"
	"strings"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions/feeds"
)

// RegionsParams are the dependencies of NewRegions.
type RegionsParams struct {
	fx.In

	Lifecycle fx.Lifecycle
	Store     *registry.Store
	Config    RegistryConfig `optional:"true"`
	Logger    *zap.Logger    `optional:"true"`
}

// NewRegions sets up the feeds of the Store's remote regions
// (RegistryConfig.RemoteRegions), or returns nil when there are none.
// They start with the application, after the Store, without waiting for
// the network (reads that ask for a region are refused until it has been
// read), and stop before it, waiting for their goroutines. They log to
// the module's logger, named regions, unless the config names another.
func NewRegions(p RegionsParams) (*feeds.Feeds, error) {
	cfg := p.Config.RemoteRegions
	if len(cfg.Remotes) == 0 {
		return nil, nil
	}
	if cfg.Logger == nil && p.Logger != nil {
		cfg.Logger = p.Logger.Named("regions")
	}
	f, err := feeds.New(p.Store, cfg)
	if err != nil {
		return nil, err
	}
	p.Lifecycle.Append(fx.StartStopHook(f.Start, f.Stop))
	return f, nil
}

// withRemotes returns configured with a RemoteRegion for each of remotes
// it does not name yet (names compared without regard to case).
func withRemotes(configured []registry.RemoteRegion, remotes []feeds.Remote) []registry.RemoteRegion {
	out := configured
	for _, r := range remotes {
		name := strings.TrimSpace(r.Name)
		if name == "" || slices.ContainsFunc(out, func(c registry.RemoteRegion) bool { return strings.EqualFold(strings.TrimSpace(c.Name), name) }) {
			continue
		}
		if len(out) == len(configured) {
			out = slices.Clone(configured) // the supplied config is not modified
		}
		out = append(out, registry.RemoteRegion{Name: name})
	}
	return out
}
