package regions

import (
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

// Instances is a Store as the gateways' balancer.Instancer: the Store's
// own instances and change stream (Instances, AllInstances, Subscribe, the
// Store's methods) and its remote regions' UP instances (InstancesIn,
// through its Mirror), which routing, the balancer and the traffic sweep
// ask for when fail-over regions are configured.
type Instances struct {
	*registry.Store
	mirror *Mirror
}

// InstancesOf returns store as a balancer.Instancer that answers for its
// remote regions too.
func InstancesOf(store *registry.Store) *Instances {
	return &Instances{Store: store, mirror: MirrorOf(store)}
}

// InstancesIn is Mirror.InstancesIn: app's UP instances in region, the
// Store's own for its region or "".
func (i *Instances) InstancesIn(app, region string) []*eureka.InstanceInfo {
	return i.mirror.InstancesIn(app, region)
}
