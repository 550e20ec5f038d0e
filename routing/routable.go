package routing

import (
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// routable is what the Router found in one instance list of an app: the
// instances that may take its requests (UP, passing their health check,
// at their plain port or else their secure one), kept while the list and
// the health checks' generation stay the same. Without it an app with a
// failing instance would get a new slice on every request, and the
// balancer, seeing a new list each time, would look over its state of
// every instance on every pick.
type routable struct {
	data    **eureka.InstanceInfo // the backing array of the list it was made from
	n       int
	gen     uint64
	healthy bool // some instance passes its health check
	list    []*eureka.InstanceInfo
	secure  bool
}

// routable returns the instances of up (app's UP instances, not empty)
// that may take a request, whether they are reached on their secure port,
// and whether any passes its health check.
func (r *Router) routable(app string, up []*eureka.InstanceInfo) (list []*eureka.InstanceInfo, secure, healthy bool) {
	return r.routableIn(r.cache.Get(app), app, up, false)
}

// routableIn is routable with the cache slot of the list (a region's own
// for a remote region's instances), and whether they are a remote
// region's.
func (r *Router) routableIn(slot *atomic.Pointer[routable], app string, up []*eureka.InstanceInfo, remote bool) (list []*eureka.InstanceInfo, secure, healthy bool) {
	var gen uint64
	if r.cfg.Health != nil {
		gen = r.cfg.Health.Generation()
	}
	if c := slot.Load(); c != nil && c.data == &up[0] && c.n == len(up) && c.gen == gen {
		return c.list, c.secure, c.healthy
	}
	h := r.healthy(app, up, remote)
	if len(h) > 0 {
		healthy = true
		if list = Enabled(h, false); len(list) == 0 {
			secure = true
			if list = Enabled(h, true); len(list) == 0 {
				secure = false
			}
		}
	}
	slot.Store(&routable{data: &up[0], n: len(up), gen: gen, healthy: healthy, list: list, secure: secure})
	return list, secure, healthy
}

// ForgetApps drops the routable lists the router keeps of apps, in every
// region: apps that have left the registry, whose last lists would
// otherwise stay for good. A gateway's sweep calls it with the apps whose
// traffic counters it dropped (traffic.Recorder.Sweep).
func (r *Router) ForgetApps(apps []string) {
	if len(apps) == 0 {
		return
	}
	gone := make(map[string]bool, len(apps))
	for _, app := range apps {
		gone[app] = true
	}
	drop := func(app string, _ *atomic.Pointer[routable]) bool { return gone[app] }
	r.cache.DeleteFunc(drop)
	r.guards.DeleteFunc(func(app string, _ *guardSlot) bool { return gone[app] })
	for _, region := range r.regionCache.Snapshot() {
		region.DeleteFunc(drop)
	}
}
