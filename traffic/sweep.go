package traffic

import (
	"time"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/perapp"
)

// Grace is how long the counters of an application or an instance are
// kept once Sweep has found it gone from the registry: long enough for a
// scrape every 15 or 30 s to read their last values, short enough that
// the series a gateway exports stay those of what is registered, within
// Grace and one sweep's interval of each departure. The gateways sweep
// every 5 s and on each change the registry announces, so a departed
// instance's series are gone within 55 s.
const Grace = 50 * time.Second

// Sweep drops the counters of the applications and instances that src
// (the registry the gateway routes by) has been without for Grace or
// more, at now, the sweeper's clock, unless they have requests in
// flight:
//
//   - an instance of the local region once src lists no instance of its
//     application with its id, whatever its status (AllInstances, when
//     src has it, as a registry.Store and a discovery.Client do; else
//     Instances);
//   - another region's instance once src's InstancesIn lists none of its
//     id in that region;
//   - an application, with its requests, latencies, failures and
//     retries, once it has no instance in the local region nor in the
//     regions it has counters of.
//
// Unknown is never dropped. A request that began on counters Sweep then
// drops ends on them unseen; an application or instance that comes back
// starts from zero, a counter reset to Prometheus. Sweep returns the
// applications it dropped. It is safe for concurrent use with recording
// and with other sweeps.
func (r *Recorder) Sweep(now time.Time, src balancer.Instancer) (dropped []string) {
	r.sweepMu.Lock()
	defer r.sweepMu.Unlock()
	t := now.UnixNano()
	drop := map[*App]bool{}
	for name, a := range r.apps.Snapshot() {
		if name == Unknown {
			continue
		}
		if expired(&a.gone, a.sweep(name, t, src), t) && a.inFlight.Load() == 0 {
			drop[a] = true
		}
	}
	if len(drop) == 0 {
		return nil
	}
	r.apps.DeleteFunc(func(name string, a *App) bool {
		if drop[a] {
			dropped = append(dropped, name)
		}
		return drop[a]
	})
	return dropped
}

// sweep drops the app's instances that have been gone for Grace, and
// reports whether the app is still registered (in some region).
func (a *App) sweep(app string, now int64, src balancer.Instancer) (live bool) {
	local := allInstances(src, app)
	live = len(local) > 0
	sweepInstances(&a.instances, local, now)
	a.remote.DeleteFunc(func(region string, m *perapp.Map[Instance]) bool {
		list := instancesIn(src, app, region)
		live = live || len(list) > 0
		sweepInstances(m, list, now)
		return len(m.Snapshot()) == 0
	})
	for region := range a.regions.Snapshot() {
		live = live || len(instancesIn(src, app, region)) > 0
	}
	return live
}

// sweepInstances drops the instances of m that have not been in list
// for Grace, and have no request in flight.
func sweepInstances(m *perapp.Map[Instance], list []*eureka.InstanceInfo, now int64) {
	if len(m.Snapshot()) == 0 {
		return
	}
	ids := make(map[string]bool, len(list))
	for _, i := range list {
		ids[i.ID()] = true
	}
	m.DeleteFunc(func(id string, i *Instance) bool {
		return expired(&i.gone, ids[id], now) && i.inFlight.Load() == 0
	})
}

// expired notes in gone when a sweep first found something gone (0
// while it is there), and reports whether that was Grace or more before
// now.
func expired(gone *int64, live bool, now int64) bool {
	switch {
	case live:
		*gone = 0
		return false
	case *gone == 0:
		*gone = now
	}
	return now-*gone >= int64(Grace)
}

// allInstances returns app's instances in the local region, whatever
// their status when src can tell.
func allInstances(src balancer.Instancer, app string) []*eureka.InstanceInfo {
	if all, ok := src.(balancer.AllInstancer); ok {
		return all.AllInstances(app)
	}
	return src.Instances(app)
}

// instancesIn returns app's instances in another region, when src reads
// other regions.
func instancesIn(src balancer.Instancer, app, region string) []*eureka.InstanceInfo {
	if in, ok := src.(balancer.RegionInstancer); ok {
		return in.InstancesIn(app, region)
	}
	return nil
}
