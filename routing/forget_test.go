package routing

import "testing"

// ForgetApps drops the routable lists of departed apps, in the local
// region and the others; a request after it finds the app anew.
func TestForgetApps(t *testing.T) {
	s := regionStore(t, true)
	r := newRouter(t, Config{Instances: s, FailoverRegions: []string{"eu-west"}})
	routeOf(t, r, "/orders/x")
	s.Cancel("ORDERS", "us-1", false)
	if rt := routeOf(t, r, "/orders/x"); rt.Region != "eu-west" {
		t.Fatalf("region %q, want eu-west", rt.Region)
	}
	if r.cache.Lookup("ORDERS") == nil || r.regionCache.Get("eu-west").Lookup("ORDERS") == nil {
		t.Fatal("no routable lists kept")
	}
	r.ForgetApps([]string{"ORDERS"})
	if r.cache.Lookup("ORDERS") != nil || r.regionCache.Get("eu-west").Lookup("ORDERS") != nil {
		t.Fatal("ORDERS' routable lists kept after ForgetApps")
	}
	if rt := routeOf(t, r, "/orders/x"); rt.Region != "eu-west" || len(rt.Instances) != 1 {
		t.Fatalf("after ForgetApps: region %q instances %v", rt.Region, rt.Instances)
	}
}
