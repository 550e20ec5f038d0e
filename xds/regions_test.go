package xds_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/internal/xdstest"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/xds"
)

// With a fail-over region, grpc-go's RPCs go to the local region's
// instances while it has any, to the remote region's when it has none,
// and back when a local one registers; the remote region's changes are
// followed too.
func TestFailoverRegionTakesRPCsWhenTheLocalRegionHasNone(t *testing.T) {
	store := registry.New(registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}}})
	x := xdstest.Serve(t, store, xds.Config{FailoverRegions: []string{"EU-West"}})
	grpcInst := func(id string) *eureka.InstanceInfo {
		i := testkit.Inst("ORDERS", id)
		i.Metadata = map[string]string{xds.DefaultGRPCPortKey: strconv.Itoa(xdstest.Backend(t, id))}
		return i
	}
	remote := func(ids ...string) {
		t.Helper()
		app := &eureka.Application{Name: "ORDERS"}
		for _, id := range ids {
			app.Instances = append(app.Instances, grpcInst(id))
		}
		if err := store.UpdateRegion("eu-west", &eureka.Applications{Applications: []*eureka.Application{app}}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	testkit.MustRegister(t, store, grpcInst("local"), false)
	remote("far")

	conn := xdstest.Conn(t, xdstest.Bootstrap(x.Addr().String(), `{"type":"insecure"}`, t.Name()), "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "local")
	store.Cancel("ORDERS", "local", false)
	xdstest.EventuallyReaches(t, conn, "far")
	remote("far", "farther")
	xdstest.EventuallyReaches(t, conn, "far", "farther")
	testkit.MustRegister(t, store, grpcInst("back"), false)
	xdstest.EventuallyReaches(t, conn, "back")
}

// Fail-over regions must be the Store's remote regions.
func TestFailoverRegionsRefused(t *testing.T) {
	store := registry.New(registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}}})
	if _, err := xds.New(store, xds.Config{FailoverRegions: []string{"ap-south"}}); err == nil || !strings.Contains(err.Error(), `FailoverRegions: "ap-south"`) {
		t.Errorf("a region the Store does not serve: %v", err)
	}
}
