package routing

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// A subset that names the local region by its name (us-east-1, the
// Store's) is of the local instances as the plain route is: keyed as the
// local region (Route.InstanceRegion ""), so that an instance failing its
// health check takes neither, and an instance one of them ejected is
// ejected for the other.
func TestRuleSubsetOfTheLocalRegionByName(t *testing.T) {
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer sick.Close()
	locals := []*eureka.InstanceInfo{localInst("us-1"), localInst("us-2"), localInst("us-3"), localInst("us-4")}
	locals[2].HealthCheckURL = sick.URL + "/health"
	s := regionStoreOf(t, locals...)
	checker := balancer.NewChecker(s, balancer.CheckConfig{Interval: 20 * time.Millisecond})
	checker.Start()
	defer checker.Stop()
	rules, err := ParseRules("rules.yaml", []byte(`
apps:
  ORDERS:
    rules:
      - match: {header: {X-Here: "1"}}
        to: [{select: {region: `+registry.DefaultRegion+`}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	r := newRouter(t, Config{Instances: s, Rules: rules, Health: checker})
	var dst [256]byte
	byName := func() Route {
		rt, _, _ := r.Route(dst[:0], []byte("/orders/x"), &Request{Header: header{"X-Here": "1"}})
		if rt.Subset == nil || rt.Subset.Region() != registry.DefaultRegion {
			t.Fatalf("the rule's subset was not taken: %v %v", rt.Subset, rt.Answer)
		}
		return rt
	}
	plain := func() Route { return routeOf(t, r, "/orders/x") }
	picks := func(route func() Route) map[string]bool {
		seen := map[string]bool{}
		for range 40 {
			rt := route()
			try := r.Retry(&rt, true)
			seen[try.Next().ID()] = true
		}
		return seen
	}
	// timeOut has a request of route time out on id.
	timeOut := func(route func() Route, id string) {
		for range 100 {
			rt := route()
			try := r.Retry(&rt, true)
			if try.Next().ID() == id {
				try.Failed(balancer.TimedOut)
				return
			}
		}
		t.Fatalf("no request went to %s", id)
	}

	testkit.Eventually(t, 5*time.Second, "us-3's health check to fail", func() bool { return len(plain().Instances) == 3 })
	if rt := byName(); rt.InstanceRegion() != "" {
		t.Errorf("the local region by name is keyed as region %q, want the local one", rt.InstanceRegion())
	}
	if seen := picks(byName); seen["us-3"] || len(seen) != 3 {
		t.Errorf("the subset's picks %v, want us-1, us-2 and us-4, never us-3, which fails its health check", seen)
	}

	timeOut(plain, "us-2")
	if seen := picks(byName); seen["us-2"] || len(seen) != 2 {
		t.Errorf("the subset's picks %v after the plain route's timeout on us-2, want us-1 and us-4", seen)
	}
	timeOut(byName, "us-1")
	if seen := picks(plain); len(seen) != 1 || !seen["us-4"] {
		t.Errorf("the plain route's picks %v after the subset's timeout on us-1, want us-4 only", seen)
	}
	for _, e := range r.cfg.Balancer.Ejected() {
		if e.Region != "" {
			t.Errorf("ejection %+v, want the local region's", e)
		}
	}
}
