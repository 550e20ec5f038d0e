package routing

import (
	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
)

// RegionInstancer is what Config.Instances must also have for
// FailoverRegions: balancer's, declared there, the low package.
type RegionInstancer = balancer.RegionInstancer

// RegionHeader tells an instance that its request came from another
// region's gateway because the instance's own region had no instance
// that could take it: its value is the instance's region, as the
// gateway's FailoverRegions name it. A client's own is removed.
const RegionHeader = "X-Eurekagate-Region"

// regions is a Router's fail-over state.
type regions struct {
	in    RegionInstancer
	names []string
}

// failover returns the routable instances of app in the first of the
// FailoverRegions that has some, with whether they are at their secure
// port and the region's name; "" when none has any.
func (r *Router) failover(app string) (list []*eureka.InstanceInfo, secure bool, region string) {
	rg := r.regions
	if rg == nil {
		return nil, false, ""
	}
	for _, name := range rg.names {
		up := rg.in.InstancesIn(app, name)
		if len(up) == 0 {
			continue
		}
		list, secure, healthy := r.routableIn(r.regionCache.Get(name).Get(app), app, up, true)
		if healthy && len(list) > 0 {
			return list, secure, name
		}
	}
	return nil, false, ""
}

// regionList returns the routable instances of app in region at the
// plain or secure port: the local region's for its own name (or when the
// Router has no remote regions to read), a remote region's otherwise;
// and the region they are of as the balancer and the traffic counters
// key them (Route.InstanceRegion): "" for the local one. It is the one
// place a subset's region is told local or remote, so that the local
// region named by its name shares the plain route's ejections, counters
// and health checks.
func (r *Router) regionList(app, region string, secure bool) (list []*eureka.InstanceInfo, keyed string) {
	up := r.cfg.Instances.Instances(app)
	slot, remote := r.cache.Get(app), false
	if in, ok := r.cfg.Instances.(RegionInstancer); ok {
		local := up
		up = in.InstancesIn(app, region)
		slot = r.regionCache.Get(region).Get(app)
		// The local region's own name gives the local list itself.
		remote = len(up) > 0 && (len(local) == 0 || &local[0] != &up[0])
	}
	if len(up) == 0 {
		return nil, ""
	}
	list, s, healthy := r.routableIn(slot, app, up, remote)
	if !healthy || s != secure {
		return nil, ""
	}
	if remote {
		keyed = region
	}
	return list, keyed
}
