package routing

import (
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	remote "github.com/eurekagate/eurekagate/registry/regions"
)

// regionStore is a Store of region us-east-1 with ORDERS registered
// locally (unless local is false) and in the remote region eu-west, as
// the gateways read it (registry/regions.InstancesOf).
func regionStore(t *testing.T, local bool) *remote.Instances {
	t.Helper()
	if !local {
		return regionStoreOf(t)
	}
	return regionStoreOf(t, localInst("us-1"))
}

// regionStoreOf is regionStore with locals registered locally.
func regionStoreOf(t *testing.T, locals ...*eureka.InstanceInfo) *remote.Instances {
	t.Helper()
	s := registry.New(registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}}})
	for _, i := range locals {
		if err := s.Register(i, false); err != nil {
			t.Fatal(err)
		}
	}
	eu := inst("ORDERS", "eu-1", true, false)
	eu.Metadata = map[string]string{"version": "2"}
	doc := &eureka.Applications{Applications: []*eureka.Application{{Name: "ORDERS", Instances: []*eureka.InstanceInfo{eu}}}}
	if err := remote.MirrorOf(s).Update("eu-west", doc, time.Now()); err != nil {
		t.Fatal(err)
	}
	return remote.InstancesOf(s)
}

func localInst(id string) *eureka.InstanceInfo {
	i := inst("ORDERS", id, true, false)
	i.IPAddr, i.DataCenterInfo = "127.0.0.1", eureka.DataCenterInfo{Name: "MyOwn"}
	return i
}

func routeOf(t *testing.T, r *Router, target string) Route {
	t.Helper()
	var dst [256]byte
	rt, _, _ := r.Route(dst[:0], []byte(target), nil)
	return rt
}

func TestFailoverToAnotherRegionAndBack(t *testing.T) {
	s := regionStore(t, true)
	r := newRouter(t, Config{Instances: s, FailoverRegions: []string{"eu-west"}})
	if rt := routeOf(t, r, "/orders/x"); rt.Region != "" || len(rt.Instances) != 1 || rt.Instances[0].ID() != "us-1" {
		t.Fatalf("with a local instance: region %q instances %v", rt.Region, rt.Instances)
	}
	s.Cancel("ORDERS", "us-1", false)
	rt := routeOf(t, r, "/orders/x")
	if rt.Answer.Status != 0 || rt.Region != "eu-west" || len(rt.Instances) != 1 || rt.Instances[0].ID() != "eu-1" {
		t.Fatalf("after the local cancel: answer %d region %q instances %v", rt.Answer.Status, rt.Region, rt.Instances)
	}
	// The retries read the same region.
	try := r.Retry(&rt, true)
	if got := try.Source.Instances("ORDERS"); len(got) != 1 || got[0].ID() != "eu-1" {
		t.Errorf("retry source %v", got)
	}
	// Back as soon as a local instance registers.
	if err := s.Register(localInst("us-2"), false); err != nil {
		t.Fatal(err)
	}
	if rt := routeOf(t, r, "/orders/x"); rt.Region != "" || rt.Instances[0].ID() != "us-2" {
		t.Errorf("after the local registration: region %q instances %v", rt.Region, rt.Instances)
	}
}

// A request that fails over allocates no more than one that does not:
// the region's routable list is found without building a key.
func TestFailoverAllocatesNothing(t *testing.T) {
	s := regionStore(t, false)
	r := newRouter(t, Config{Instances: s, FailoverRegions: []string{"eu-west"}})
	target := []byte("/orders/x")
	if routeOnce(r, target, nil) == nil {
		t.Fatal("no instance in the fail-over region")
	}
	if n := testing.AllocsPerRun(1000, func() { routeOnce(r, target, nil) }); n != 0 {
		t.Errorf("%v allocations per failed-over request", n)
	}
}

func TestNoFailoverByDefault(t *testing.T) {
	s := regionStore(t, false)
	r := newRouter(t, Config{Instances: s})
	if rt := routeOf(t, r, "/orders/x"); rt.Answer.Status != 503 || rt.Region != "" {
		t.Errorf("without FailoverRegions: answer %d region %q", rt.Answer.Status, rt.Region)
	}
	r = newRouter(t, Config{Instances: s, FailoverRegions: []string{"ap-south"}})
	if rt := routeOf(t, r, "/orders/x"); rt.Answer.Status != 503 {
		t.Errorf("a fail-over region without the app: answer %d", rt.Answer.Status)
	}
	if _, err := New(Config{Instances: apps{}, FailoverRegions: []string{"eu-west"}}); err == nil {
		t.Error("FailoverRegions over an Instancer without regions was accepted")
	}
}

func TestRuleSubsetOfARegion(t *testing.T) {
	s := regionStore(t, true)
	rules, err := ParseRules("rules.yaml", []byte(`
apps:
  ORDERS:
    rules:
      - match: {header: {X-Try: eu}}
        to: [{select: {region: eu-west, version: "2"}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	r := newRouter(t, Config{Instances: s, Rules: rules})
	req := &Request{Header: header{"X-Try": "eu"}}
	var dst [256]byte
	rt, _, _ := r.Route(dst[:0], []byte("/orders/x"), req)
	if rt.Subset == nil || rt.Subset.Region() != "eu-west" || len(rt.Instances) != 1 || rt.Instances[0].ID() != "eu-1" {
		t.Fatalf("subset %v instances %v", rt.Subset, rt.Instances)
	}
	if got := rt.Subset.Label(); got != "region=eu-west, version=2" {
		t.Errorf("label %q", got)
	}
	try := r.Retry(&rt, true)
	if got := try.Source.Instances("ORDERS"); len(got) != 1 || got[0].ID() != "eu-1" {
		t.Errorf("retry source %v", got)
	}
	if rt := routeOf(t, r, "/orders/x"); rt.Subset != nil || rt.Instances[0].ID() != "us-1" {
		t.Errorf("without the header: %v %v", rt.Subset, rt.Instances)
	}
	if _, err := ParseRules("rules.yaml", []byte("apps:\n  ORDERS:\n    default: {region: {in: [a, b]}}\n")); err == nil {
		t.Error("a region list was accepted")
	}
}
