package caddymodule

import (
	"context"
	"net/http"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
)

// A balancer policy that reads instance metadata works over a Caddy pool:
// the eureka upstream source leaves the instances behind the pool in the
// request, and selectUpstream hands them to the policy.
func TestSelectUpstreamGivesPoliciesTheInstances(t *testing.T) {
	var list []*eureka.InstanceInfo
	var pool reverseproxy.UpstreamPool
	for n, zone := range []string{"a", "b", "a"} {
		list = append(list, &eureka.InstanceInfo{InstanceID: zone + string(rune('0'+n)), Metadata: map[string]string{"zone": zone}})
		pool = append(pool, &reverseproxy.Upstream{Host: new(reverseproxy.Host), Dial: "127.0.0.1:" + string(rune('1'+n))})
	}
	request := func(instances []*eureka.InstanceInfo) *http.Request {
		ctx := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, map[string]any{})
		r, _ := http.NewRequestWithContext(ctx, "GET", "/", nil)
		caddyhttp.SetVar(ctx, serviceVar, "ORDERS")
		caddyhttp.SetVar(ctx, instancesVar, instances)
		return r
	}
	zone := &balancer.ZonePreferring{Zone: "b"}
	for range 3 {
		if got := selectUpstream(zone, pool, request(list)); got != pool[1] {
			t.Fatalf("zone b: got %v", got)
		}
	}
	// Instances that do not match the pool (from another source) are not
	// used: no instance is in zone b, so every upstream takes its turn.
	seen := map[*reverseproxy.Upstream]bool{}
	for range 3 {
		seen[selectUpstream(zone, pool, request(list[:2]))] = true
	}
	if len(seen) != 3 {
		t.Fatalf("without instances: %d upstreams chosen, want 3", len(seen))
	}
	if got := selectUpstream(new(balancer.RoundRobin), nil, request(nil)); got != nil {
		t.Fatalf("empty pool: %v", got)
	}
}
