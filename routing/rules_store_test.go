package routing

import (
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

// Eureka's own tools keep working under rules, over a real Store:
// OUT_OF_SERVICE takes an instance out of its subset, and a metadata
// update (PUT .../metadata) moves an instance into another subset at the
// next request.
func TestRulesFollowTheStore(t *testing.T) {
	store := registry.New(registry.Config{})
	for _, i := range versioned(2, "2.0") {
		i.IPAddr, i.DataCenterInfo.Name = "127.0.0.1", eureka.DataCenterMyOwn
		if err := store.Register(i, false); err != nil {
			t.Fatal(err)
		}
	}
	rules, err := ParseRules("r", []byte(exampleRules))
	if err != nil {
		t.Fatal(err)
	}
	r := newRouter(t, Config{Instances: store, Rules: rules})
	canary := &Request{Method: "GET", Header: header{"X-Canary": "1"}}

	// No 2.1 yet: the canary falls back to the default subset.
	if v, label, _ := route(r, "/orders/x", canary); v != "2.0" || label != "version=2.0" {
		t.Fatalf("canary before any 2.1: %q %q", v, label)
	}
	// One 2.0 instance becomes 2.1 by its metadata: the next canary
	// request goes to it, the others to the remaining 2.0.
	if err := store.UpdateMetadata("ORDERS", "orders-2.0-1", map[string]string{"version": "2.1"}); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, _, rt := route(r, "/orders/x", canary); len(rt.Instances) != 1 || rt.Instances[0].ID() != "orders-2.0-1" {
			t.Fatalf("canary after the metadata update: %v", rt.Instances)
		}
		if _, _, rt := route(r, "/orders/x", nil); len(rt.Instances) != 1 || rt.Instances[0].ID() != "orders-2.0-0" {
			t.Fatalf("default after the metadata update: %v", rt.Instances)
		}
	}
	// OUT_OF_SERVICE takes the only 2.0 out: the default subset is empty,
	// and fallback default answers 503 naming it.
	if err := store.SetStatus("ORDERS", "orders-2.0-0", eureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, _, rt := route(r, "/orders/x", nil); rt.Answer.Status != 503 || rt.Answer.Reason != "application \"orders\" has no UP instance in subset version=2.0\n" {
		t.Fatalf("the default subset out of service: %+v", rt.Answer)
	}
	if v, _, _ := route(r, "/orders/x", canary); v != "2.1" {
		t.Fatalf("canary with 2.0 out of service: %q", v)
	}
}
