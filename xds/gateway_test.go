package xds_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
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

// gatewayConfig reads the edge gateway's route configuration from the
// next response, which must carry it.
func gatewayConfig(t *testing.T, d *deltaStream) *routev3.RouteConfiguration {
	t.Helper()
	r := d.recv()
	if r.TypeUrl != resourcev3.RouteType || !slices.Equal(names(r), []string{xds.GatewayRoutes}) {
		t.Fatalf("got %s %v, want the gateway's routes", r.TypeUrl, names(r))
	}
	var rc routev3.RouteConfiguration
	if err := r.Resources[0].Resource.UnmarshalTo(&rc); err != nil {
		t.Fatal(err)
	}
	return &rc
}

// caseInsensitive fails the test unless m matches the path in any case,
// as the gateways match app names.
func caseInsensitive(t *testing.T, m *routev3.RouteMatch) {
	t.Helper()
	if m.GetCaseSensitive() == nil || m.GetCaseSensitive().GetValue() {
		t.Errorf("%v is matched case-sensitively", m)
	}
}

// gatewayRoutes reads the edge gateway's routes from a response: the
// cluster each path prefix (or path) goes to, and its rewrite.
func gatewayRoutes(t *testing.T, d *deltaStream) map[string]string {
	t.Helper()
	rc := gatewayConfig(t, d)
	out := map[string]string{}
	for _, rt := range rc.VirtualHosts[0].Routes {
		m := rt.Match
		caseInsensitive(t, m)
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

// edgeRoutes reads the edge gateway's routes from the next response that
// carries them, each as "path [headers] -> clusters rewrite".
func edgeRoutes(t *testing.T, d *deltaStream) []string {
	t.Helper()
	rc := gatewayConfig(t, d)
	var out []string
	for _, rt := range rc.VirtualHosts[0].Routes {
		m, a := rt.Match, rt.GetRoute()
		caseInsensitive(t, m)
		var hs []string
		for _, h := range m.Headers {
			v := h.GetStringMatch().GetExact() + h.GetStringMatch().GetSafeRegex().GetRegex()
			if h.GetPresentMatch() {
				v = "present"
			}
			if h.InvertMatch {
				v = "not " + v
			}
			hs = append(hs, h.Name+"="+v)
		}
		to := a.GetCluster()
		for _, w := range a.GetWeightedClusters().GetClusters() {
			to += fmt.Sprintf("%s:%d,", w.Name, w.Weight.GetValue())
		}
		out = append(out, fmt.Sprintf("%s%s %v -> %s %s", m.GetPrefix(), m.GetPath(), hs, to, a.PrefixRewrite))
	}
	return out
}

// edgeRoutesBecome reads the edge gateway's routes until they are want.
func edgeRoutesBecome(t *testing.T, d *deltaStream, want ...string) {
	t.Helper()
	for got := edgeRoutes(t, d); !slices.Equal(got, want); got = edgeRoutes(t, d) {
		t.Logf("routes\n%s\nwaiting for\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Envoy as an edge gateway follows the traffic rules as gRPC clients do:
// the edge routes of an app with rules are its rules' routes over the
// same subset clusters (header matches, a path_prefix of the path the
// instance gets, case-sensitive after the app's name, weights), under the
// app's prefix with the prefix removed; every resource passes Envoy's
// constraints (ValidateAll, in recv). Rules refused for xDS are refused
// here too, and rules removed leave the whole cluster.
func TestGatewayRoutesFollowTheRules(t *testing.T) {
	e := newEnv(t, xds.Config{})
	e.register(t, "ORDERS", "a", 9001, map[string]string{"version": "2.0"})
	e.register(t, "ORDERS", "c", 9002, map[string]string{"version": "2.1"})
	e.register(t, "PAYMENTS", "p", 9003, nil)
	d := openDelta(t, e)
	d.subscribe(resourcev3.RouteType, xds.GatewayRoutes)
	edgeRoutesBecome(t, d,
		"/orders/ [] -> ORDERS /", "/orders [] -> ORDERS /",
		"/payments/ [] -> PAYMENTS /", "/payments [] -> PAYMENTS /")

	e.xds.SetRules(mustRules(t, `
apps:
  ORDERS:
    default: {version: "2.0"}
    rules:
      - match: {header: {X-Canary: "1"}}
        to: [{select: {version: "2.1"}}]
      - match: {path_prefix: /v2/}
        to: [{select: {version: "2.1"}, weight: 10}, {select: {version: "2.0"}, weight: 90}]
      - match: {path_prefix: /}
        to: [{select: {version: "2.0"}}]
`))
	edgeRoutesBecome(t, d,
		"/orders/ [x-canary=1] -> ORDERS/version=2.1 /", "/orders [x-canary=1] -> ORDERS/version=2.1 /",
		`/orders/ [:path=(?:/[^/?]*/v2/.*)] -> ORDERS/version=2.1:10,ORDERS/version=2.0:90, /`,
		`/orders/ [:path=(?:/[^/?]*/.*)] -> ORDERS/version=2.0 /`, "/orders [] -> ORDERS/version=2.0 /",
		"/orders/ [] -> ORDERS/version=2.0 /", "/orders [] -> ORDERS/version=2.0 /",
		"/payments/ [] -> PAYMENTS /", "/payments [] -> PAYMENTS /")
	subsets := []string{"ORDERS/version=2.0", "ORDERS/version=2.1"}
	d.subscribe(resourcev3.ClusterType, subsets...)
	d.recvAll(resourcev3.ClusterType, subsets...)

	// A rule xDS cannot express (a cookie) refuses the app's rules at the
	// edge as on its listeners: its requests go to its whole cluster.
	e.xds.SetRules(mustRules(t, `
apps:
  ORDERS:
    rules:
      - match: {cookie: {session: {present: true}}}
        to: [{select: {version: "2.1"}}]
`))
	refused := []string{"/orders/ [] -> ORDERS /", "/orders [] -> ORDERS /", "/payments/ [] -> PAYMENTS /", "/payments [] -> PAYMENTS /"}
	for got := edgeRoutes(t, d); !slices.Equal(got, refused); got = edgeRoutes(t, d) {
		t.Logf("routes %v, waiting for the refusal's", got)
	}
	if _, ok := e.xds.RulesRefused()["ORDERS"]; !ok {
		t.Fatalf("refused %v, want ORDERS", e.xds.RulesRefused())
	}
}
