package xds

import (
	"errors"
	"fmt"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

// failoverRegions checks cfg.FailoverRegions against src: they must be
// remote regions a Store serves.
func failoverRegions(src Source, regions []string) ([]string, error) {
	if len(regions) == 0 {
		return nil, nil
	}
	store, ok := src.(*registry.Store)
	if !ok {
		return nil, fmt.Errorf("xds: FailoverRegions: %v: the source is not a Store, whose remote regions they would be", regions)
	}
	var out []string
	for _, r := range regions {
		// A region not read yet is one the Store serves.
		parsed, err := store.ParseRegions(r)
		if (err != nil && !errors.Is(err, registry.ErrRegionNotReady)) || len(parsed) != 1 {
			return nil, fmt.Errorf("xds: FailoverRegions: %q is not a remote region of the registry (%v)", r, store.RemoteRegions())
		}
		out = append(out, parsed[0])
	}
	return out, nil
}

// regionInstances returns app's UP instances in a remote region of the
// Store (the source of a server with fail-over regions).
func (s *Server) regionInstances(app, region string) []*eureka.InstanceInfo {
	return s.src.(*registry.Store).InstancesIn(app, region)
}

// followRegions marks the apps the fail-over regions' changes touch,
// from their first read on, until the server stops. The Server's wait
// group owns its goroutine.
func (s *Server) followRegions(store *registry.Store) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var since, rsince uint64 = store.Version(), 0
		for s.ctx.Err() == nil {
			p := store.Poll(s.ctx, registry.Poll{Since: since, Wait: time.Minute, Regions: s.failover, SinceRegions: rsince})
			if p.Stale {
				// Read the regions again from the start: every app they hold.
				since, rsince = store.Version(), 0
				continue
			}
			for _, a := range p.RegionChanges {
				s.mark(a.Name)
			}
			since, rsince = p.Version, p.RegionVersion
		}
	}()
}
