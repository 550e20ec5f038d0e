package balancer

import "github.com/eurekagate/eurekagate/eureka"

// RegionInstancer is what an Instancer may also have to answer for other
// regions: the UP instances of app in a region, sorted by id. A
// *registry.Store with remote regions and a *discovery.Client that
// fetches them both have it. The balancer (a route's region), the
// traffic sweeper and routing's FailoverRegions look for it.
type RegionInstancer interface {
	InstancesIn(app, region string) []*eureka.InstanceInfo
}

// AllInstancer is what an Instancer may also have: every instance of app
// whatever its status, which tells an application with no UP instance
// from one not registered. A registry.Store and a discovery.Client have
// it.
type AllInstancer interface {
	AllInstances(app string) []*eureka.InstanceInfo
}
