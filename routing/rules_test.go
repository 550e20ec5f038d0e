package routing

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
)

// versioned returns UP instances of ORDERS, n of each version.
func versioned(n int, versions ...string) []*eureka.InstanceInfo {
	var out []*eureka.InstanceInfo
	for _, v := range versions {
		for k := range n {
			i := inst("ORDERS", fmt.Sprintf("orders-%s-%d", v, k), true, false)
			i.Metadata = map[string]string{"version": v}
			out = append(out, i)
		}
	}
	return out
}

// header is a routing.Header over a map.
type header map[string]string

func (h header) Field(name string) (string, bool) {
	v, ok := h[name]
	return v, ok
}

const exampleRules = `
apps:
  orders:
    default: {version: "2.0"}
    rules:
      - match: {header: {X-Canary: "1"}}
        to: [{select: {version: "2.1"}}]
      - match: {cookie: {tenant: acme}, path_prefix: /v2/}
        to:
          - {select: {version: "2.1"}, weight: 10}
          - {select: {version: "2.0"}, weight: 90}
        sticky: {header: X-User-Id}
      - match: {query: {beta: {present: true}}, method: [GET, HEAD]}
        to: [{select: {version: "2.2"}}]
      - match: {client: 10.9.0.0/16}
        to: [{select: {version: "2.1"}}]
    fallback: default
`

func rulesRouter(t testing.TB, doc string, list []*eureka.InstanceInfo) *Router {
	t.Helper()
	rules, err := ParseRules("rules.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return newRouter(t, Config{Instances: apps{up: map[string][]*eureka.InstanceInfo{"ORDERS": list}}, Rules: rules})
}

// route routes one request for target and returns the version of the
// instance it goes to and the route header the instance gets.
func route(r *Router, target string, req *Request) (version, label string, rt Route) {
	rt, _, _ = r.Route(nil, []byte(target), req)
	if rt.Answer.Status != 0 {
		return "", "", rt
	}
	try := r.Retry(&rt, true)
	inst := try.Next()
	try.Succeeded()
	if rt.Subset != nil {
		label = rt.Subset.Label()
	}
	return inst.Metadata["version"], label, rt
}

func TestRulesHeaderMatchTakesEveryRequest(t *testing.T) {
	r := rulesRouter(t, exampleRules, versioned(2, "2.0", "2.1"))
	req := &Request{Method: "GET", Header: header{"X-Canary": "1"}}
	for range 100 {
		if v, label, _ := route(r, "/orders/x", req); v != "2.1" || label != "version=2.1" {
			t.Fatalf("canary request went to %q (label %q)", v, label)
		}
	}
}

func TestRulesNoMatchGoesToDefault(t *testing.T) {
	r := rulesRouter(t, exampleRules, versioned(2, "2.0", "2.1", "2.2"))
	for _, req := range []*Request{nil, {Method: "GET", Header: header{"X-Canary": "0"}}, {Method: "POST", Header: header{}}} {
		for range 50 {
			if v, label, _ := route(r, "/orders/x?alpha=1", req); v != "2.0" || label != "version=2.0" {
				t.Fatalf("%+v went to %q (label %q)", req, v, label)
			}
		}
	}
	// The query condition and the method condition, together.
	if v, _, _ := route(r, "/orders/x?a=1&beta", &Request{Method: "GET", Header: header{}}); v != "2.2" {
		t.Errorf("?beta went to %q", v)
	}
	// The client condition.
	req := &Request{Method: "GET", Remote: &net.TCPAddr{IP: net.ParseIP("10.9.3.4"), Port: 5}, Header: header{}}
	if v, _, _ := route(r, "/orders/x", req); v != "2.1" {
		t.Errorf("client 10.9.3.4 went to %q", v)
	}
}

func TestRulesWeightsSplitWithinOnePercent(t *testing.T) {
	r := rulesRouter(t, exampleRules, versioned(3, "2.0", "2.1"))
	req := &Request{Method: "GET", Header: header{"Cookie": "a=b; tenant=acme"}}
	counts := map[string]int{}
	for range 10_000 {
		v, _, _ := route(r, "/orders/v2/items", req)
		counts[v]++
	}
	if c := counts["2.1"]; c < 900 || c > 1100 {
		t.Errorf("2.1 got %d of 10000, asked 10%%: %v", c, counts)
	}
	if counts["2.0"]+counts["2.1"] != 10_000 {
		t.Errorf("requests went elsewhere: %v", counts)
	}
}

func TestRulesStickyKeyKeepsItsSubset(t *testing.T) {
	r := rulesRouter(t, exampleRules, versioned(2, "2.0", "2.1"))
	subsetOf := func(r *Router, user string) string {
		req := &Request{Method: "GET", Header: header{"Cookie": "tenant=acme", "X-User-Id": user}}
		v, _, _ := route(r, "/orders/v2/x", req)
		return v
	}
	first := subsetOf(r, "user-7")
	for range 1000 {
		if v := subsetOf(r, "user-7"); v != first {
			t.Fatalf("user-7 moved from %s to %s", first, v)
		}
	}
	// Over many keys, the split follows the weights; after 10/90 becomes
	// 30/70 only keys of the shrinking subset (2.0) move.
	before := map[string]string{}
	n21 := 0
	for k := range 5000 {
		user := fmt.Sprintf("user-%d", k)
		before[user] = subsetOf(r, user)
		if before[user] == "2.1" {
			n21++
		}
	}
	if n21 < 400 || n21 > 600 {
		t.Errorf("sticky keys on 2.1: %d of 5000, asked 10%%", n21)
	}
	r2 := rulesRouter(t, strings.Replace(strings.Replace(exampleRules, "weight: 10}", "weight: 30}", 1), "weight: 90}", "weight: 70}", 1), versioned(2, "2.0", "2.1"))
	moved := 0
	for user, was := range before {
		now := subsetOf(r2, user)
		if now != was {
			moved++
			if was != "2.0" {
				t.Fatalf("%s moved from %s, which grew, to %s", user, was, now)
			}
		}
	}
	if moved < 800 || moved > 1200 {
		t.Errorf("%d of 5000 keys moved, expected about 20%%", moved)
	}
}

func TestRulesFallback(t *testing.T) {
	doc := func(fallback string) string {
		return `
apps:
  ORDERS:
    default: {version: "2.0"}
    rules:
      - match: {header: {X-Canary: {present: true}}}
        to: [{select: {version: "3.0"}}]
    fallback: ` + fallback + "\n"
	}
	canary := &Request{Method: "GET", Header: header{"X-Canary": ""}}
	list := versioned(1, "1.0", "2.0")

	r := rulesRouter(t, doc("default"), list)
	if v, label, _ := route(r, "/orders/x", canary); v != "2.0" || label != "version=2.0" {
		t.Errorf("fallback default: went to %q (%q)", v, label)
	}
	r = rulesRouter(t, doc("any"), list)
	seen := map[string]bool{}
	for range 10 {
		v, label, _ := route(r, "/orders/x", canary)
		if label != "" {
			t.Errorf("fallback any: the instance is told %q", label)
		}
		seen[v] = true
	}
	if !seen["1.0"] || !seen["2.0"] {
		t.Errorf("fallback any: went to %v", seen)
	}
	r = rulesRouter(t, doc("none"), list)
	_, _, rt := route(r, "/orders/x", canary)
	if rt.Answer.Status != 503 || rt.Answer.Reason != "application \"orders\" has no UP instance in subset version=3.0\n" {
		t.Errorf("fallback none: %+v", rt.Answer)
	}
	// The default subset empty too: 503 naming it.
	r = rulesRouter(t, doc("default"), versioned(1, "1.0"))
	if _, _, rt := route(r, "/orders/x", canary); rt.Answer.Status != 503 || !strings.Contains(rt.Answer.Reason, "subset version=2.0") {
		t.Errorf("empty default: %+v", rt.Answer)
	}
}

// Instances without the key are in no subset; a metadata change moves an
// instance between subsets at the next request (a new list).
func TestRulesFollowMetadata(t *testing.T) {
	list := versioned(1, "2.0")
	bare := inst("ORDERS", "bare", true, false)
	src := &apps{up: map[string][]*eureka.InstanceInfo{"ORDERS": append(list, bare)}}
	rules, err := ParseRules("r", []byte("apps: {ORDERS: {default: {version: \"2.0\"}}}"))
	if err != nil {
		t.Fatal(err)
	}
	r := newRouter(t, Config{Instances: src, Rules: rules})
	for range 10 {
		if _, _, rt := route(r, "/orders/x", nil); len(rt.Instances) != 1 || rt.Instances[0].ID() == "bare" {
			t.Fatalf("routed to %v", rt.Instances)
		}
	}
	moved := *bare
	moved.Metadata = map[string]string{"version": "2.0"}
	src.up["ORDERS"] = append(versioned(1, "2.0"), &moved)
	if _, _, rt := route(r, "/orders/x", nil); len(rt.Instances) != 2 {
		t.Errorf("after the metadata change: %d instances", len(rt.Instances))
	}
}

// A trusted proxy's route header is honoured; anyone else's is ignored
// (and the transports remove it).
func TestRulesRouteHeaderFromTrustedProxiesOnly(t *testing.T) {
	r := rulesRouter(t, exampleRules, versioned(1, "2.0", "2.1", "2.5"))
	h := header{balancer.RouteHeader: "version=2.5"}
	if v, _, _ := route(r, "/orders/x", &Request{Method: "GET", Header: h}); v != "2.0" {
		t.Errorf("an untrusted client picked %q", v)
	}
	if v, label, _ := route(r, "/orders/x", &Request{Method: "GET", Header: h, Trusted: true}); v != "2.5" || label != "version=2.5" {
		t.Errorf("a trusted proxy's subset: %q %q", v, label)
	}
	// A subset the proxy names that has no instance here: the rules.
	h[balancer.RouteHeader] = "version=9"
	if v, _, _ := route(r, "/orders/x", &Request{Method: "GET", Header: h, Trusted: true}); v != "2.0" {
		t.Errorf("an empty subset of the proxy's: %q", v)
	}
}

func TestRulesRefusedWithLineAndReason(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"apps:\n  ORDERS:\n    rules:\n      - match: {header: {X: {regex: \"(\"}}}\n        to: [{select: {v: \"1\"}}]\n",
			"bad.yaml:4: apps.ORDERS.rules[0].match.header.X.regex: error parsing regexp"},
		{"apps:\n  ORDERS:\n    fallback: sometimes\n", `bad.yaml:3: apps.ORDERS.fallback: "sometimes" is not default, any or none`},
		{"apps:\n  ORDERS:\n    rules:\n      - to:\n          - {select: {v: \"1\"}, weight: -3}\n", `bad.yaml:5: apps.ORDERS.rules[0].to[0].weight: "-3" is not a whole number from 0 to 10000`},
		{"apps:\n  ORDERS:\n    rules:\n      - match: {header: {X: \"1\"}}\n", "bad.yaml:4: apps.ORDERS.rules[0]: a rule needs to:"},
		{"apps:\n  ORDERS:\n    defualt: {v: \"1\"}\n", `bad.yaml:3: apps.ORDERS.defualt: unknown field "defualt" (known: breaker, default, fallback, limits, retry_budget, rules)`},
		{"apps:\n  ORDERS:\n    rules:\n      - match: {client: 10.0.0.0/33}\n        to: [{select: {v: \"1\"}}]\n", `bad.yaml:4: apps.ORDERS.rules[0].match.client: "10.0.0.0/33" is neither`},
		{"apps:\n  ORDERS:\n    default: {v: \"a b\"}\n", `bad.yaml:3: apps.ORDERS.default: metadata key "v": value "a b"`},
		{"apps:\n  ORDERS: {}\n  orders: {}\n", "bad.yaml:3: apps.orders: app ORDERS comes twice"},
		{"apps:\n  ORDERS:\n   rules: [\n", "bad.yaml:3: did not find expected node content"},
		{"apps:\n  ORDERS:\n    rules:\n      - to: [{select: {v: \"1\"}, weight: 0}]\n", "bad.yaml:4: apps.ORDERS.rules[0].to: the weights add up to 0"},
		{"apps:\n  ORDERS:\n    rules:\n      - to: [{select: {v: \"1\"}}]\n        sticky: {header: A, cookie: b}\n", "bad.yaml:5: apps.ORDERS.rules[0].sticky.cookie: sticky takes one key"},
		{"apps:\n  ORDERS:\n    rules:\n      - match: {header: {x-forwarded-for: 10.9.9.9}}\n        to: [{select: {v: \"1\"}}]\n",
			`bad.yaml:4: apps.ORDERS.rules[0].match.header.x-forwarded-for: "x-forwarded-for" is a header the gateway sets itself, in place of a client's, so a rule would read what the client forged: to match the client's address use client: [CIDR prefixes or addresses]`},
		{"apps:\n  ORDERS:\n    rules:\n      - match: {header: {\"<img>\": x}}\n        to: [{select: {v: \"1\"}}]\n",
			`bad.yaml:4: apps.ORDERS.rules[0].match.header.<img>: "<img>" is not a header name (an HTTP token: letters, digits and !#$%&'*+-.^_` + "`" + `|~)`},
		{"apps:\n  ORDERS:\n    rules:\n      - to: [{select: {v: \"1\"}}, {select: {v: \"2\"}}]\n        sticky: {header: X-Real-IP}\n",
			`bad.yaml:5: apps.ORDERS.rules[0].sticky.header: "X-Real-IP" is a header the gateway sets itself`},
		// The gateways replace a client's request id unless a trusted
		// proxy sent it: a rule would read the client's, not the one the
		// instance gets.
		{"apps:\n  ORDERS:\n    rules:\n      - match: {header: {x-request-id: abc}}\n        to: [{select: {v: \"1\"}}]\n",
			`bad.yaml:4: apps.ORDERS.rules[0].match.header.x-request-id: "x-request-id" is a header the gateway sets itself, in place of a client's`},
		{"apps:\n  ORDERS:\n    rules:\n      - to: [{select: {v: \"1\"}}, {select: {v: \"2\"}}]\n        sticky: {header: X-Request-Id}\n",
			`bad.yaml:5: apps.ORDERS.rules[0].sticky.header: "X-Request-Id" is a header the gateway sets itself`},
	} {
		_, err := ParseRules("bad.yaml", []byte(c.doc))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s...", c.doc, err, c.want)
		}
	}
}

// JSON is YAML: the same document in JSON parses to the same rules.
func TestRulesJSON(t *testing.T) {
	r := rulesRouter(t, `{"apps": {"ORDERS": {"rules": [{"match": {"header": {"X-Canary": "1"}}, "to": [{"select": {"version": "2.1"}}]}]}}}`, versioned(1, "2.0", "2.1"))
	if v, _, _ := route(r, "/orders/x", &Request{Header: header{"X-Canary": "1"}}); v != "2.1" {
		t.Errorf("went to %q", v)
	}
}

// twentyRules is a document whose matching rule comes last, behind 19
// that do not match: the gateway benchmark's.
func twentyRules() string {
	var b strings.Builder
	b.WriteString("apps:\n  ORDERS:\n    default: {version: \"2.0\"}\n    rules:\n")
	for k := range 19 {
		fmt.Fprintf(&b, "      - match: {header: {X-Tenant: tenant-%d}, cookie: {beta: \"1\"}}\n        to: [{select: {version: \"2.1\"}}]\n", k)
	}
	b.WriteString("      - match: {header: {X-Canary: \"1\"}, path_prefix: /items/}\n        to: [{select: {version: \"2.1\"}, weight: 10}, {select: {version: \"2.0\"}, weight: 90}]\n        sticky: {header: X-User-Id}\n")
	return b.String()
}

// The rule decision allocates nothing per request, with 20 rules.
func TestRulesAllocateNothing(t *testing.T) {
	r := rulesRouter(t, twentyRules(), versioned(2, "2.0", "2.1"))
	target := []byte("/orders/items/7?x=1")
	req := &Request{Method: "GET", Header: header{"X-Canary": "1", "X-User-Id": "u-1", "Cookie": "a=b"}}
	r.Route(nil, target, req)
	n := testing.AllocsPerRun(1000, func() { routeOnce(r, target, req) })
	if n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}

// BenchmarkRouteTwentyRules is BenchmarkRoute with 20 rules on the app,
// the one that matches last.
func BenchmarkRouteTwentyRules(b *testing.B) {
	r := rulesRouter(b, twentyRules(), versioned(2, "2.0", "2.1"))
	target := []byte("/orders/items/7?x=1")
	req := &Request{Method: "GET", Header: header{"X-Canary": "1", "X-User-Id": "u-1", "Cookie": "a=b"}}
	b.ReportAllocs()
	for b.Loop() {
		routeOnce(r, target, req)
	}
}

// A regex condition tests values of up to MaxRegexValue bytes: a longer
// header, cookie or query value (issue 44's 8 KB header) does not match,
// however early the expression would find its match in it, so a client
// cannot make every request cost a long match.
func TestRulesRegexTestsBoundedValues(t *testing.T) {
	const doc = `
apps:
  orders:
    default: {version: "2.0"}
    rules:
      - match: {header: {X-User: {regex: '[a-z0-9._-]{1,64}@example\.com'}}}
        to: [{select: {version: "2.1"}}]
      - match: {cookie: {user: {regex: '@example\.com'}}}
        to: [{select: {version: "2.1"}}]
      - match: {query: {user: {regex: '@example\.com'}}}
        to: [{select: {version: "2.1"}}]
`
	r := rulesRouter(t, doc, versioned(1, "2.0", "2.1"))
	user := "alice@example.com"
	pad := func(n int) string { return user + strings.Repeat("x", n-len(user)) }
	for _, c := range []struct {
		name, target string
		header       header
		want         string
	}{
		{"a header", "/orders/x", header{"X-User": user}, "2.1"},
		{"a header of MaxRegexValue bytes", "/orders/x", header{"X-User": pad(MaxRegexValue)}, "2.1"},
		{"a header of 8 KB", "/orders/x", header{"X-User": pad(8000)}, "2.0"},
		{"a header a byte too long", "/orders/x", header{"X-User": pad(MaxRegexValue + 1)}, "2.0"},
		{"a cookie", "/orders/x", header{"Cookie": "user=" + user}, "2.1"},
		{"a cookie of 8 KB", "/orders/x", header{"Cookie": "user=" + pad(8000)}, "2.0"},
		{"a query value", "/orders/x?user=" + user, nil, "2.1"},
		{"a query value of MaxRegexValue bytes", "/orders/x?user=" + pad(MaxRegexValue), nil, "2.1"},
		{"a query value of 8 KB", "/orders/x?user=" + pad(8000), nil, "2.0"},
	} {
		if v, _, _ := route(r, c.target, &Request{Method: "GET", Header: c.header}); v != c.want {
			t.Errorf("%s: went to %q, want %q", c.name, v, c.want)
		}
	}
}
