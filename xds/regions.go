package xds

import (
	"errors"
	"fmt"
	"time"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
)

// failoverRegions checks cfg.FailoverRegions against src: they must be
// remote regions a Store serves. It returns them as the Store names them,
// and the Store's Mirror that holds them (nil without any).
func failoverRegions(src Source, names []string) (*regions.Mirror, []string, error) {
	if len(names) == 0 {
		return nil, nil, nil
	}
	store, ok := src.(*registry.Store)
	if !ok {
		return nil, nil, fmt.Errorf("xds: FailoverRegions: %v: the source is not a Store, whose remote regions they would be", names)
	}
	mirror := regions.MirrorOf(store)
	var out []string
	for _, r := range names {
		// A region not read yet is one the Store serves.
		parsed, err := mirror.Parse(r)
		if (err != nil && !errors.Is(err, regions.ErrRegionNotReady)) || len(parsed) != 1 {
			return nil, nil, fmt.Errorf("xds: FailoverRegions: %q is not a remote region of the registry (%v)", r, mirror.Names())
		}
		out = append(out, parsed[0])
	}
	return mirror, out, nil
}

// followRegions marks the apps the fail-over regions' changes touch,
// from their first read on, until the server stops. The Server's wait
// group owns its goroutine.
func (s *Server) followRegions(store *registry.Store) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		since := registry.Version{Local: store.Version(), Regions: true}
		for s.ctx.Err() == nil {
			p := store.Poll(s.ctx, registry.Poll{Since: since, Wait: time.Minute, Remote: s.mirror, Regions: s.failover})
			if p.Stale {
				// Read the regions again from the start: every app they hold.
				since = registry.Version{Local: store.Version(), Regions: true}
				continue
			}
			for _, a := range p.RemoteChanges {
				s.mark(a.Name)
			}
			since = p.Version
		}
	}()
}
