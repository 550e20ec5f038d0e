package xds_test

import (
	"maps"
	"net/http"
	"slices"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/eurekagate/eurekagate/xds"
)

// routesBecome reads the edge gateway's routes until they are want (the
// server's loop builds a registration after it returns).
func routesBecome(t *testing.T, d *deltaStream, want map[string]string) {
	t.Helper()
	for got := gatewayRoutes(t, d); !maps.Equal(got, want); got = gatewayRoutes(t, d) {
		t.Logf("routes %v, waiting for %v", got, want)
	}
}

// gatewayRoutes reads the edge gateway's routes from a response: the
// cluster each path prefix (or path) goes to, and its rewrite.
func gatewayRoutes(t *testing.T, d *deltaStream) map[string]string {
	t.Helper()
	r := d.recv()
	if r.TypeUrl != resourcev3.RouteType || !slices.Equal(names(r), []string{xds.GatewayRoutes}) {
		t.Fatalf("got %s %v, want the gateway's routes", r.TypeUrl, names(r))
	}
	var rc routev3.RouteConfiguration
	if err := r.Resources[0].Resource.UnmarshalTo(&rc); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, rt := range rc.VirtualHosts[0].Routes {
		m := rt.Match
		if m.GetCaseSensitive().GetValue() || m.GetCaseSensitive() == nil {
			t.Errorf("%v is matched case-sensitively", m)
		}
		out[m.GetPrefix()+m.GetPath()] = rt.GetRoute().GetCluster() + " " + rt.GetRoute().GetPrefixRewrite()
	}
	return out
}

// Envoy as an edge gateway reads one route configuration over RDS that
// sends /orders/... to ORDERS as /..., in any case; it changes when an
// app comes or goes, not when an app's instances change.
func TestGatewayRoutesFollowTheApps(t *testing.T) {
	e := newEnv(t, xds.Config{})
	e.register(t, "ORDERS", "o1", 9001, nil)

	d := openDelta(t, e)
	d.subscribe(resourcev3.RouteType, xds.GatewayRoutes)
	want := map[string]string{"/orders/": "ORDERS /", "/orders": "ORDERS /"}
	routesBecome(t, d, want)

	// An instance change to ORDERS, then a new app: the next routes are
	// the new app's, the instance change having sent none.
	e.register(t, "ORDERS", "o2", 9002, nil)
	e.register(t, "PAYMENTS", "p1", 9003, nil)
	want["/payments/"], want["/payments"] = "PAYMENTS /", "PAYMENTS /"
	routesBecome(t, d, want)

	e.send(t, http.MethodDelete, "/apps/PAYMENTS/p1", http.StatusOK)
	delete(want, "/payments/")
	delete(want, "/payments")
	routesBecome(t, d, want)
}
