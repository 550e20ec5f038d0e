package xds_test

import (
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/internal/xdstest"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/xds"
)

func mustRules(t *testing.T, doc string) *routing.Rules {
	t.Helper()
	rules, err := routing.ParseRules("rules.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// A canary header takes a gRPC client's RPCs to the canary instances
// only, the others go to the default subset, and when the canary leaves
// its RPCs fall back to the default subset, as the gateways route them.
func TestRulesCanaryHeaderOverXDS(t *testing.T) {
	e := newEnv(t, xds.Config{})
	e.register(t, "ORDERS", "a", xdstest.Backend(t, "a"), map[string]string{"version": "2.0"})
	e.register(t, "ORDERS", "b", xdstest.Backend(t, "b"), map[string]string{"version": "2.0"})
	e.register(t, "ORDERS", "c", xdstest.Backend(t, "c"), map[string]string{"version": "2.1"})
	e.xds.SetRules(mustRules(t, `
apps:
  orders:
    default: {version: "2.0"}
    rules:
      - match: {header: {X-Canary: "1"}}
        to: [{select: {version: "2.1"}}]
`))
	conn := e.conn(t, "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "a", "b")
	if got := xdstest.Count(conn, 30, "x-canary", "1"); got["c"] != 30 {
		t.Fatalf("canary RPCs reached %v, want c only", got)
	}
	if got := xdstest.Count(conn, 30, "x-canary", "2"); got["c"] != 0 || got["error"] != 0 {
		t.Fatalf("RPCs with another X-Canary reached %v, want a and b", got)
	}

	e.send(t, http.MethodDelete, "/apps/ORDERS/c", http.StatusOK)
	testkit.Eventually(t, 10*time.Second, "canary RPCs fall back to a and b", func() bool {
		got := xdstest.Count(conn, 12, "x-canary", "1")
		return got["a"] > 0 && got["b"] > 0 && got["a"]+got["b"] == 12
	})
}

// With fallback none, a rule's subset without instances fails its RPCs
// (UNAVAILABLE, the gateways' 503) instead of sending them elsewhere.
func TestRulesFallbackNoneOverXDS(t *testing.T) {
	e := newEnv(t, xds.Config{})
	e.register(t, "ORDERS", "a", xdstest.Backend(t, "a"), map[string]string{"version": "2.0"})
	e.xds.SetRules(mustRules(t, `
apps:
  ORDERS:
    fallback: none
    rules:
      - match: {header: {X-Canary: {present: true}}}
        to: [{select: {version: "2.1"}}]
`))
	conn := e.conn(t, "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "a")
	if got := xdstest.Count(conn, 5, "x-canary", "yes"); got["error"] != 5 {
		t.Fatalf("RPCs to an empty subset with fallback none reached %v", got)
	}
	e.register(t, "ORDERS", "c", xdstest.Backend(t, "c"), map[string]string{"version": "2.1"})
	testkit.Eventually(t, 10*time.Second, "canary RPCs reach c", func() bool { return xdstest.Count(conn, 12, "x-canary", "yes")["c"] == 12 })
}

// A 10/90 rule splits a gRPC client's RPCs within a binomial bound that a
// split of exactly 10/90 leaves less than once in 10^6 runs.
func TestRulesWeightsOverXDS(t *testing.T) {
	e := newEnv(t, xds.Config{})
	e.register(t, "ORDERS", "new", xdstest.Backend(t, "new"), map[string]string{"version": "2"})
	e.register(t, "ORDERS", "old", xdstest.Backend(t, "old"), map[string]string{"version": "1"})
	e.xds.SetRules(mustRules(t, `
apps:
  ORDERS:
    rules:
      - to:
          - {select: {version: "2"}, weight: 10}
          - {select: {version: "1"}, weight: 90}
`))
	conn := e.conn(t, "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "new", "old")
	const n = 2000
	lo, hi := binomialBounds(n, 0.1, 1e-6)
	got := xdstest.Count(conn, n)
	if got["new"] < lo || got["new"] > hi || got["new"]+got["old"] != n {
		t.Fatalf("%d RPCs split %v, want %d to %d to new (10%%) and the rest to old", n, got, lo, hi)
	}
}

// binomialBounds returns the narrowest [lo, hi] with equal tails that
// holds n draws of probability p but with a probability below miss.
func binomialBounds(n int, p, miss float64) (lo, hi int) {
	pmf := func(k int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		c, _ := math.Lgamma(float64(n - k + 1))
		return math.Exp(a - b - c + float64(k)*math.Log(p) + float64(n-k)*math.Log(1-p))
	}
	var tail float64
	for lo = 0; tail+pmf(lo) < miss/2; lo++ {
		tail += pmf(lo)
	}
	tail = 0
	for hi = n; tail+pmf(hi) < miss/2; hi-- {
		tail += pmf(hi)
	}
	return lo, hi
}

// Rules xDS cannot express as the gateways apply them are refused for
// xDS with their reason (logged once, in RulesRefused and the metric),
// and the app's RPCs go to its whole cluster; rules it can express for
// another app are served.
func TestRulesRefusedForXDS(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	store, api := xdstest.Registry(t)
	e := &env{store: store, api: api, xds: xdstest.Serve(t, store, xds.Config{Logger: zap.New(core)})}
	e.register(t, "ORDERS", "a", xdstest.Backend(t, "a"), map[string]string{"version": "1"})
	e.register(t, "ORDERS", "b", xdstest.Backend(t, "b"), map[string]string{"version": "2"})
	e.register(t, "USERS", "u", xdstest.Backend(t, "u"), map[string]string{"version": "1"})
	doc := `
apps:
  ORDERS:
    rules:
      - match: {header: {X-Beta: "1"}}
        to: [{select: {version: "2"}}]
      - match: {cookie: {session: beta}}
        to: [{select: {version: "2"}}]
    default: {version: "1"}
  USERS:
    rules:
      - to: [{select: {version: "1"}}]
        sticky: {header: X-User}
`
	e.xds.SetRules(mustRules(t, doc))
	e.xds.SetRules(mustRules(t, doc))
	want := map[string]string{
		"ORDERS": "rule 2: cookie session: gRPC calls carry no cookies",
		"USERS":  "rule 1: sticky header X-User: a gRPC client picks a weighted cluster per RPC, not by a key",
	}
	if got := e.xds.RulesRefused(); len(got) != 2 || got["ORDERS"] != want["ORDERS"] || got["USERS"] != want["USERS"] {
		t.Fatalf("refused %q, want %q", got, want)
	}
	if n := logs.FilterMessageSnippet("traffic rules refused").Len(); n != 2 {
		t.Errorf("%d refusals logged for two apps set twice, want 2", n)
	}
	if got := refusedMetric(t, e.xds); got != "ORDERS USERS" {
		t.Errorf("eureka_xds_rules_refused has apps %q, want ORDERS USERS", got)
	}
	xdstest.EventuallyReaches(t, e.conn(t, "xds:///orders"), "a", "b")

	e.xds.SetRules(mustRules(t, "apps:\n  ORDERS:\n    default: {version: \"2\"}\n"))
	if got := e.xds.RulesRefused(); len(got) != 0 {
		t.Fatalf("refused %q after rules xDS expresses", got)
	}
	xdstest.EventuallyReaches(t, e.conn(t, "xds:///Orders"), "b")
}

// The listener, subset clusters and endpoints of rules pass the
// constraints Envoy applies when it loads them (ValidateAll).
func TestRulesResourcesValidate(t *testing.T) {
	e := newEnv(t, xds.Config{})
	e.register(t, "ORDERS", "a", 9001, map[string]string{"version": "2.0"})
	e.xds.SetRules(mustRules(t, `
apps:
  ORDERS:
    default: {version: "2.0"}
    rules:
      - match: {header: {X-Canary: {in: ["1", "yes"]}, X-Tenant: {regex: "^acme-"}, X-Debug: {present: false}}, path_prefix: /orders.Api/}
        to:
          - {select: {version: "2.1"}, weight: 10}
          - {select: {version: "2.0"}, weight: 90}
          - {select: {version: "3"}, weight: 0}
`))
	d := openDelta(t, e)
	d.subscribe(resourcev3.ListenerType, "orders")
	d.recvAll(resourcev3.ListenerType, "orders")
	subsets := []string{"ORDERS/version=2.0", "ORDERS/version=2.1", "ORDERS/version=3"}
	d.subscribe(resourcev3.ClusterType, subsets...)
	d.recvAll(resourcev3.ClusterType, subsets...)
	d.subscribe(resourcev3.EndpointType, subsets...)
	d.recvAll(resourcev3.EndpointType, subsets...)
}

// refusedMetric returns the apps eureka_xds_rules_refused counts (at 1),
// sorted.
func refusedMetric(t *testing.T, x *xds.Server) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(x.Collector("eureka"))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var apps []string
	for _, f := range families {
		if f.GetName() != "eureka_xds_rules_refused" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetGauge().GetValue() == 1 {
				apps = append(apps, m.GetLabel()[0].GetValue())
			}
		}
	}
	slices.Sort(apps)
	return strings.Join(apps, " ")
}
