package routing

import (
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// sharedRouter is a router over rules parsed with shared limits on url's
// Redis: a gateway of its own.
func sharedRouter(t testing.TB, url, doc string) (*Router, *SharedLimits) {
	t.Helper()
	s, err := NewSharedLimits(SharedLimitsConfig{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rules, err := RulesLimits{Shared: s}.Parse("rules.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Instances: apps{up: map[string][]*eureka.InstanceInfo{"ORDERS": {inst("ORDERS", "a", true, false)}}}, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return r, s
}

// The Redis URL is checked when the limits are made, and a password in
// it is never quoted.
func TestSharedLimitsURL(t *testing.T) {
	_, err := NewSharedLimits(SharedLimitsConfig{URL: "http://user:s3cret@127.0.0.1:1"})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "redis URL") {
		t.Fatalf("got %v", err)
	}
}

// Two gateways share one limit: a burst of 5 of one app's requests
// passes, whichever gateway takes them, and the rest is refused until
// the rate gives more (1/h: none in the test).
func TestSharedLimitAcrossGateways(t *testing.T) {
	redis := testkit.StartRedis(t)
	doc := "apps:\n  orders:\n    limits: [{key: app, rate: 1/h, burst: 5, shared: true}]\n"
	a, _ := sharedRouter(t, redis.URL(), doc)
	b, _ := sharedRouter(t, redis.URL(), doc)
	passed := 0
	// Each gateway's first request passes on credit (a lease of 1) while
	// it asks Redis; the test waits for each answer, so that the credit
	// is paid back before the next request.
	for i := range 20 {
		r := []*Router{a, b}[i%2]
		if status, _ := limited(r, "/orders/x", client("10.0.0.1")); status == 200 {
			passed++
		}
		testkit.Eventually(t, 5*time.Second, "the refill answered", func() bool { return settled(r) })
	}
	if passed != 5 {
		t.Fatalf("%d passed, want the burst of 5", passed)
	}
}

// settled reports whether r's shared limits have no refill out.
func settled(r *Router) bool {
	for _, l := range r.Rules().apps["ORDERS"].limits {
		if l.shared != nil && l.shared.Pending() {
			return false
		}
	}
	return true
}

// Redis killed: a limit failing open passes its requests, one failing
// closed answers 503 naming the cause; both are limited again once
// redis-server is back on its port, without a restart of the gateway.
func TestSharedLimitRedisDown(t *testing.T) {
	redis := testkit.StartRedis(t)
	doc := "apps:\n  orders:\n    limits: [{key: client, rate: 1/h, burst: 1, shared: true, redis_failure: %s}]\n"
	open, so := sharedRouter(t, redis.URL(), strings.Replace(doc, "%s", "open", 1))
	closed, sc := sharedRouter(t, redis.URL(), strings.Replace(doc, "%s", "closed", 1))
	for _, r := range []*Router{open, closed} {
		limited(r, "/orders/x", client("10.0.0.1")) // on credit
		testkit.Eventually(t, 5*time.Second, "the refill answered", func() bool { return settled(r) })
	}
	redis.Kill()
	for _, r := range []*Router{open, closed} { // the refill of the refused request finds Redis gone
		limited(r, "/orders/x", client("10.0.0.2"))
	}
	testkit.Eventually(t, 10*time.Second, "Redis found down", func() bool { return !so.Health().Up && !sc.Health().Up })
	if status, _ := limited(open, "/orders/x", client("10.0.0.3")); status != 200 {
		t.Errorf("fail open, Redis down: %d, want 200", status)
	}
	rt, _, _ := closed.Route(nil, []byte("/orders/x"), client("10.0.0.3"))
	if closed.Limit(&rt, client("10.0.0.3")) || rt.Answer.Status != 503 || !strings.Contains(rt.Answer.Reason, "Redis") {
		t.Errorf("fail closed, Redis down: %+v, want 503 naming Redis", rt.Answer)
	}
	if h := so.Health(); h.Errors == 0 || h.LastError == "" {
		t.Errorf("health %+v, want errors counted and the last one", h)
	}
	redis.Start()
	testkit.Eventually(t, 10*time.Second, "Redis found up", func() bool { return so.Health().Up && sc.Health().Up })
	for _, r := range []*Router{open, closed} {
		limited(r, "/orders/x", client("10.0.0.1")) // Redis lost its state: on credit again
		testkit.Eventually(t, 5*time.Second, "the refill answered", func() bool { return settled(r) })
		if status, _ := limited(r, "/orders/x", client("10.0.0.1")); status != 429 {
			t.Errorf("Redis back: %d, want 429", status)
		}
	}
}

// neverShared is a per-client shared limit no test reaches.
const neverShared = "apps:\n  orders:\n    limits: [{key: client, rate: 1000000000/s, shared: true}]\n"

// The decision of a shared limit with a lease allocates nothing.
func TestSharedLimitNoAllocations(t *testing.T) {
	redis := testkit.StartRedis(t)
	r, _ := sharedRouter(t, redis.URL(), neverShared)
	passesWithoutAllocations(t, r, client("10.0.0.1"))
}

// passesWithoutAllocations fails t unless req passes r's limits on
// /orders/x without an allocation, once its keys are held and its leases
// granted.
func passesWithoutAllocations(t *testing.T, r *Router, req *Request) {
	t.Helper()
	rt, _, _ := r.Route(nil, []byte("/orders/x"), req)
	r.Limit(&rt, req) // the keys held
	testkit.Eventually(t, 5*time.Second, "the leases granted", func() bool { return settled(r) })
	n := testing.AllocsPerRun(1000, func() {
		rt.Answer = Answer{}
		if !r.Limit(&rt, req) {
			t.Fatal("limited")
		}
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// BenchmarkSharedLimit is a shared limit's decision with a warm lease:
// no round trip to Redis of its own.
func BenchmarkSharedLimit(b *testing.B) {
	redis := testkit.StartRedis(b)
	r, _ := sharedRouter(b, redis.URL(), neverShared)
	req := client("10.0.0.1")
	rt, _, _ := r.Route(nil, []byte("/orders/x"), req)
	b.ReportAllocs()
	for b.Loop() {
		rt.Answer = Answer{}
		r.Limit(&rt, req)
	}
}
