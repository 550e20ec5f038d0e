package gatewaysuite

import (
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry/regions"
	"github.com/eurekagate/eurekagate/routing"
)

// Region is the remote region every Starter's registry serves
// (registry.Config.RemoteRegions) and its gateway fails over to
// (routing.Config.FailoverRegions), in that order alone. The cases feed
// it with regions.Mirror.Update.
const Region = "eu-west"

// When every local instance of an app is gone, its requests go to the
// remote region's, with routing.RegionHeader telling the instance, and
// counted by region; they come back as soon as a local one registers. A
// client's own RegionHeader never reaches an instance.
func regionFailover(t *testing.T, start Starter) {
	base, store, m := start(t)
	local, remote := newBackend(t, "local", nil), newBackend(t, "remote", nil)
	register(t, store, instance("region-orders", "local", local.port))
	eu := instance("region-orders", "remote", remote.port)
	eu.App = "REGION-ORDERS"
	doc := &eureka.Applications{Applications: []*eureka.Application{{Name: "REGION-ORDERS", Instances: []*eureka.InstanceInfo{eu}}}}
	if err := regions.MirrorOf(store).Update(Region, doc, time.Now()); err != nil {
		t.Fatal(err)
	}
	s := decode(t, get(t, base+"/region-orders/x", routing.RegionHeader, "forged"))
	expect(t, "with a local instance", s.Name, "local")
	expect(t, "a client's region header", s.Header.Get(routing.RegionHeader), "")

	before := m.read(t)
	store.Cancel("REGION-ORDERS", "local", false)
	for range 3 {
		s := decode(t, get(t, base+"/region-orders/x", routing.RegionHeader, "forged"))
		expect(t, "after the local cancel", s.Name, "remote")
		expect(t, "the region header", s.Header.Get(routing.RegionHeader), Region)
	}
	after := m.read(t)
	got := after.sum("region_requests_total", "app", "REGION-ORDERS", "region", Region) -
		before.sum("region_requests_total", "app", "REGION-ORDERS", "region", Region)
	expect(t, "requests counted in the region", got, 3.0)

	register(t, store, instance("region-orders", "local", local.port))
	s = decode(t, get(t, base+"/region-orders/x"))
	expect(t, "after the local registration", s.Name, "local")
	expect(t, "region header back home", s.Header.Get(routing.RegionHeader), "")

	// With neither region holding it: the local answer, 503.
	store.Cancel("REGION-ORDERS", "local", false)
	regions.MirrorOf(store).Update(Region, &eureka.Applications{}, time.Now())
	expect(t, "with none anywhere", get(t, base+"/region-orders/x").status, 503)
}
