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
	"github.com/eurekagate/eurekagate/registry/regions"
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
		if err := regions.MirrorOf(store).Update("eu-west", &eureka.Applications{Applications: []*eureka.Application{app}}, time.Now()); err != nil {
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

// A rule's subset of a fail-over region ({region: EU-West}, in any case)
// takes a header's RPCs to that region's instances while the others stay
// local; a subset of a remote region the server does not follow refuses
// the app's rules for xDS.
func TestRuleSubsetOfAFailoverRegion(t *testing.T) {
	store := registry.New(registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}, {Name: "ap-south"}}})
	x := xdstest.Serve(t, store, xds.Config{FailoverRegions: []string{"eu-west"}})
	i := testkit.Inst("ORDERS", "far")
	i.Metadata = map[string]string{xds.DefaultGRPCPortKey: strconv.Itoa(xdstest.Backend(t, "far"))}
	if err := regions.MirrorOf(store).Update("eu-west", &eureka.Applications{Applications: []*eureka.Application{{Name: "ORDERS", Instances: []*eureka.InstanceInfo{i}}}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	local := testkit.Inst("ORDERS", "local")
	local.Metadata = map[string]string{xds.DefaultGRPCPortKey: strconv.Itoa(xdstest.Backend(t, "local"))}
	testkit.MustRegister(t, store, local, false)
	x.SetRules(mustRules(t, "apps:\n  ORDERS:\n    rules:\n      - match: {header: {X-Region: eu}}\n        to: [{select: {region: EU-West}}]\n"))
	conn := xdstest.Conn(t, xdstest.Bootstrap(x.Addr().String(), `{"type":"insecure"}`, t.Name()), "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "local")
	if got := xdstest.Count(conn, 12, "x-region", "eu"); got["far"] != 12 {
		t.Fatalf("RPCs to the eu-west subset reached %v", got)
	}

	x.SetRules(mustRules(t, "apps:\n  ORDERS:\n    rules:\n      - to: [{select: {region: ap-south}}]\n"))
	if got := x.RulesRefused()["ORDERS"]; got != "rule 1: subset region=ap-south: ap-south is neither the local region nor one of FailoverRegions, whose changes the server follows" {
		t.Errorf("refused %q", got)
	}
}
