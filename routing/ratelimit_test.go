package routing

import (
	"net"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
)

const limitRules = `
defaults:
  limits: [{key: client, rate: 1/h, burst: 1}]
apps:
  orders:
    limits:
      - {key: "header:X-Api-Key", rate: 1/h, burst: 2}
  billing:
    limits: []
`

// limited routes target as req and decides it against the limits: the
// status, and the headers a 429 gets.
func limited(r *Router, target string, req *Request) (int, map[string]string) {
	rt, _, _ := r.Route(nil, []byte(target), req)
	r.Limit(&rt, req)
	h := map[string]string{}
	if rt.Limit.Over() {
		rt.Limit.Headers(func(k, v string) { h[k] = v })
	}
	if rt.Answer.Status == 0 {
		return 200, h
	}
	return rt.Answer.Status, h
}

func limitRouter(t *testing.T, doc string) *Router {
	t.Helper()
	rules, err := ParseRules("rules.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	up := map[string][]*eureka.InstanceInfo{}
	for _, app := range []string{"ORDERS", "BILLING", "USERS", "CARTS"} {
		up[app] = []*eureka.InstanceInfo{inst(app, strings.ToLower(app), true, false)}
	}
	return newRouter(t, Config{Instances: apps{up: up}, Rules: rules})
}

func client(ip string) *Request {
	return &Request{Method: "GET", Remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 1}, Header: header{}}
}

// An app's limits keyed by a header: a burst of 2 per key, each key apart;
// the requests without the header share one bucket of their own; the
// 429's headers. The defaults hold for an app without limits (per app and
// client), and limits: [] is none.
func TestRateLimits(t *testing.T) {
	r := limitRouter(t, limitRules)
	key := func(k string) *Request {
		req := client("10.0.0.1")
		if k != "" {
			req.Header = header{"X-Api-Key": k}
		}
		return req
	}
	for i, want := range []int{200, 200, 429} {
		if got, _ := limited(r, "/orders/x", key("a")); got != want {
			t.Fatalf("key a's request %d: %d, want %d", i, got, want)
		}
	}
	status, h := limited(r, "/orders/x", key("a"))
	want := map[string]string{
		"Retry-After": "3600", "RateLimit-Policy": `"header:X-Api-Key";q=1;w=3600`, "RateLimit": `"header:X-Api-Key";r=0;t=3600`,
		"X-RateLimit-Remaining": "0", "X-RateLimit-Replenish-Rate": "0.0002777777777777778", "X-RateLimit-Burst-Capacity": "2",
	}
	if status != 429 || len(h) != len(want) {
		t.Fatalf("over the limit: %d %v", status, h)
	}
	for k, v := range want {
		if h[k] != v {
			t.Errorf("%s: %q, want %q", k, h[k], v)
		}
	}
	if got, _ := limited(r, "/orders/x", key("b")); got != 200 {
		t.Errorf("key b after a's flood: %d", got)
	}
	// No header: one bucket for all such requests, whoever sends them.
	for i, want := range []int{200, 200, 429} {
		req := key("")
		req.Remote = &net.TCPAddr{IP: net.IPv4(10, 0, 1, byte(i)), Port: 1}
		if got, _ := limited(r, "/orders/x", req); got != want {
			t.Fatalf("request %d without the header: %d, want %d", i, got, want)
		}
	}
	// The defaults: per client, and per app.
	for _, c := range []struct {
		target, ip string
		want       int
	}{
		{"/users/x", "10.0.0.1", 200}, {"/users/x", "10.0.0.1", 429},
		{"/users/x", "10.0.0.2", 200}, {"/carts/x", "10.0.0.1", 200},
		{"/billing/x", "10.0.0.1", 200}, {"/billing/x", "10.0.0.1", 200},
	} {
		if got, _ := limited(r, c.target, client(c.ip)); got != c.want {
			t.Errorf("%s from %s: %d, want %d", c.target, c.ip, got, c.want)
		}
	}
}

// scg_headers: false leaves Spring Cloud Gateway's headers out.
func TestRateLimitWithoutSCGHeaders(t *testing.T) {
	r := limitRouter(t, "defaults:\n  scg_headers: false\napps:\n  orders:\n    limits: [{key: app, rate: 10/s, burst: 1}]\n")
	limited(r, "/orders/x", client("10.0.0.1"))
	status, h := limited(r, "/orders/x", client("10.0.0.2"))
	if status != 429 || h["X-RateLimit-Remaining"] != "" || h["RateLimit-Policy"] != `"app";q=10;w=1` || h["Retry-After"] != "1" {
		t.Errorf("%d %v", status, h)
	}
}

func TestRateLimitsRefused(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"apps:\n  ORDERS:\n    limits: [{key: client, rate: 10/d}]\n", `bad.yaml:3: apps.ORDERS.limits[0].rate: "10/d" is not N/s, N/m or N/h`},
		{"apps:\n  ORDERS:\n    limits: [{key: client, rate: 0/s}]\n", `bad.yaml:3: apps.ORDERS.limits[0].rate: "0/s" is not N/s`},
		{"apps:\n  ORDERS:\n    limits: [{key: client, rate: 10/s, burst: 0}]\n", `bad.yaml:3: apps.ORDERS.limits[0].burst: "0" is not a whole number from 1`},
		{"apps:\n  ORDERS:\n    limits: [{key: client, rate: 1/h, burst: 3000000}]\n", "bad.yaml:3: apps.ORDERS.limits[0]: burst 3000000 at 1/h takes more than a year to fill again"},
		{"apps:\n  ORDERS:\n    limits: [{rate: 10/s}]\n", "bad.yaml:3: apps.ORDERS.limits[0]: a limit needs key"},
		{"apps:\n  ORDERS:\n    limits: [{key: client}]\n", "bad.yaml:3: apps.ORDERS.limits[0]: a limit needs rate"},
		{"apps:\n  ORDERS:\n    limits: [{key: ip, rate: 1/s}]\n", `bad.yaml:3: apps.ORDERS.limits[0].key: "ip" is not client, header:NAME, cookie:NAME, subset or app`},
		{"apps:\n  ORDERS:\n    limits: [{key: \"header:X-Forwarded-For\", rate: 1/s}]\n", `bad.yaml:3: apps.ORDERS.limits[0].key: "X-Forwarded-For" is a header the gateway sets itself`},
		{"apps:\n  ORDERS:\n    limits: [{key: \"header:a b\", rate: 1/s}]\n", `bad.yaml:3: apps.ORDERS.limits[0].key: "a b" is not a header name`},
		{"apps:\n  ORDERS:\n    limits: [{key: \"cookie:\", rate: 1/s}]\n", "bad.yaml:3: apps.ORDERS.limits[0].key: names no cookie"},
		{"apps:\n  ORDERS:\n    limits: [{key: client, rate: 1/s, shared: true}]\n", "bad.yaml:3: apps.ORDERS.limits[0].shared: a shared limit needs the gateway's Redis: cmd/eureka's -gateway-redis redis://HOST:PORT, Caddy's redis in the eureka app"},
		{"apps:\n  ORDERS:\n    limits: [{key: client, rate: 1/s, redis_failure: closed}]\n", "bad.yaml:3: apps.ORDERS.limits[0].redis_failure: applies to a shared limit only (shared: true)"},
		{"apps:\n  ORDERS:\n    limits: [{key: client, rate: 1/s, redis_failure: maybe}]\n", `bad.yaml:3: apps.ORDERS.limits[0].redis_failure: "maybe" is not open or closed`},
		{"defaults:\n  redis_failure: closed\n", "bad.yaml:2: defaults.redis_failure: applies to shared limits (shared: true), and the document has none"},
		{"defaults:\n  limits: {key: client}\n", "bad.yaml:2: defaults.limits: is not a list"},
		{"defaults:\n  limits: [{key: client, rate: 1/s, max_keys: 600000}, {key: app, rate: 1/s, max_keys: 600000}]\n",
			"bad.yaml:2: defaults.limits[1]: the limits' max_keys add up to 1200000, past the limit of 1000000 keys in a document"},
		{"apps:\n  ORDERS:\n    limits: [" + strings.Repeat("{key: app, rate: 1/s}, ", 9) + "]\n", "bad.yaml:3: apps.ORDERS.limits: has more than 8 limits"},
		{"defaults:\n  scg_headers: maybe\n", "bad.yaml:2: defaults.scg_headers: is not true or false"},
	} {
		_, err := ParseRules("bad.yaml", []byte(c.doc))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s...", c.doc, err, c.want)
		}
	}
	// Limits count as rules toward MaxRules.
	doc := "apps:\n  ORDERS:\n    limits: [{key: app, rate: 1/s}, {key: client, rate: 1/s}]\n"
	if _, err := (RulesLimits{MaxRules: 1}).Parse("bad.yaml", []byte(doc)); err == nil || !strings.Contains(err.Error(), "limits[1]: is a limit past the limit of 1 rules") {
		t.Errorf("two limits with MaxRules 1: %v", err)
	}
}

// The decision of a request that passes allocates nothing, keyed by the
// client or a header.
func TestRateLimitNoAllocations(t *testing.T) {
	r := limitRouter(t, "apps:\n  orders:\n    limits: [{key: client, rate: 1000000000/s}, {key: \"header:X-Api-Key\", rate: 1000000000/s}, {key: app, rate: 1000000000/s}]\n")
	req := client("10.0.0.1")
	req.Header = header{"X-Api-Key": "k"}
	passesWithoutAllocations(t, r, req)
}

func BenchmarkRateLimit(b *testing.B) {
	rules, err := ParseRules("rules.yaml", []byte("apps:\n  orders:\n    limits: [{key: client, rate: 1000000000/s}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	r, _ := New(Config{Instances: apps{up: map[string][]*eureka.InstanceInfo{"ORDERS": {inst("ORDERS", "a", true, false)}}}, Rules: rules})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := client("10.0.0.1")
		rt, _, _ := r.Route(nil, []byte("/orders/x"), req)
		for pb.Next() {
			rt.Answer = Answer{}
			r.Limit(&rt, req)
		}
	})
}

// BenchmarkRouteLimit is Route alone (route-only) and with the
// transports' Limit call after it, with rules that have no limit (none)
// and with a per-client limit that never triggers (client): the cost
// Limit adds to a gateway's decision.
func BenchmarkRouteLimit(b *testing.B) {
	for _, c := range []struct {
		name, doc string
		limit     bool
	}{
		{"route-only", "apps:\n  orders:\n    fallback: any\n", false},
		{"none", "apps:\n  orders:\n    fallback: any\n", true},
		{"client", "apps:\n  orders:\n    limits: [{key: client, rate: 1000000000/s}]\n", true},
	} {
		b.Run(c.name, func(b *testing.B) {
			rules, err := ParseRules("rules.yaml", []byte(c.doc))
			if err != nil {
				b.Fatal(err)
			}
			r := newRouter(b, Config{Rules: rules})
			target := []byte("/orders/items/7?x=1")
			req := client("10.0.0.1")
			b.ReportAllocs()
			for b.Loop() {
				rt, _, _ := r.Route(nil, target, req)
				if c.limit {
					r.Limit(&rt, req)
				}
			}
		})
	}
}
