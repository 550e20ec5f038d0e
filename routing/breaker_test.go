package routing

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// breakerRouter is a router over ORDERS and BILLING (two instances each)
// with doc in force, on a fake clock, recording its breakers' moves.
type breakerRouter struct {
	*Router
	clock  *testkit.FakeClock
	mu     sync.Mutex
	moves  []string
	denied int
}

func newBreakerRouter(t testing.TB, doc string) *breakerRouter {
	t.Helper()
	up := map[string][]*eureka.InstanceInfo{}
	for _, app := range []string{"ORDERS", "BILLING"} {
		up[app] = []*eureka.InstanceInfo{inst(app, "a", true, false), inst(app, "b", true, false)}
	}
	return newBreakerRouterOf(t, doc, up)
}

// newBreakerRouterOf is newBreakerRouter over the instances up.
func newBreakerRouterOf(t testing.TB, doc string, up map[string][]*eureka.InstanceInfo) *breakerRouter {
	t.Helper()
	rules, err := ParseRules("rules.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	b := &breakerRouter{clock: testkit.NewFakeClock()}
	b.Router = newRouter(t, Config{Instances: apps{up: up}, Rules: rules, Clock: b.clock,
		OnBreaker: func(app, subset string, to BreakerState) {
			b.mu.Lock()
			b.moves = append(b.moves, strings.TrimSpace(app+" "+subset)+" "+to.String())
			b.mu.Unlock()
		},
		OnRetryDenied: func(string) { b.denied++ },
	})
	return b
}

// ask routes a request to app and decides it: the route, and its status
// when the gateway answers it itself (0 when it goes on).
func (b *breakerRouter) ask(app string) (Route, int) {
	req := client("10.0.0.1")
	rt, _, _ := b.Route(nil, []byte("/"+app+"/x"), req)
	b.Limit(&rt, req)
	return rt, rt.Answer.Status
}

// answer sends n requests to app, each answered status after d; it
// returns the statuses of those the gateway answered itself.
func (b *breakerRouter) answer(app string, n, status int, d time.Duration) []int {
	var refused []int
	for range n {
		rt, s := b.ask(app)
		if s != 0 {
			refused = append(refused, s)
			continue
		}
		rt.Guard.Done(status, d, false)
	}
	return refused
}

func (b *breakerRouter) movesAre(t *testing.T, want ...string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if fmt.Sprint(b.moves) != fmt.Sprint(want) {
		t.Errorf("moves %q, want %q", b.moves, want)
	}
}

// The breaker opens once the window holds min_requests with the error
// ratio reached, refuses with its 503 while open (no instance given),
// lets half_open_requests probes through after open, refuses more while
// they are out, and closes when they all succeed.
func TestBreakerOpensProbesAndCloses(t *testing.T) {
	b := newBreakerRouter(t, "apps:\n  orders:\n    breaker: {error_ratio: 0.5, min_requests: 4, window: 10s, open: 5s, half_open_requests: 2}\n")
	if got := b.answer("orders", 3, 500, 0); got != nil {
		t.Fatalf("refused before min_requests: %v", got)
	}
	b.movesAre(t)
	b.answer("orders", 1, 500, 0)
	b.movesAre(t, "ORDERS open")
	rt, status := b.ask("orders")
	if status != 503 || rt.Instances != nil || !rt.Limit.Open() || rt.Limit.Over() || rt.Guard.Held() {
		t.Fatalf("while open: %d %v open=%v over=%v", status, rt.Instances, rt.Limit.Open(), rt.Limit.Over())
	}
	h := map[string]string{}
	rt.Limit.Headers(func(k, v string) { h[k] = v })
	if h[BreakerReasonHeader] != "circuit open" || h["Retry-After"] != "5" || len(h) != 2 {
		t.Errorf("headers %v", h)
	}
	if want := "circuit open: ORDERS is failing, its requests are refused for 5s before 2 probes\n"; rt.Answer.Reason != want {
		t.Errorf("reason %q", rt.Answer.Reason)
	}
	b.clock.Advance(5*time.Second - time.Millisecond)
	if _, s := b.ask("orders"); s != 503 {
		t.Fatalf("before open has passed: %d", s)
	}
	b.clock.Advance(time.Millisecond)
	p1, s1 := b.ask("orders")
	p2, s2 := b.ask("orders")
	_, s3 := b.ask("orders")
	if s1 != 0 || s2 != 0 || s3 != 503 {
		t.Fatalf("half-open: %d %d %d, want two probes and a refusal", s1, s2, s3)
	}
	b.movesAre(t, "ORDERS open", "ORDERS half_open")
	p1.Guard.Done(200, 0, false)
	if _, s := b.ask("orders"); s != 503 {
		t.Fatalf("with a probe out: %d", s)
	}
	p2.Guard.Done(200, 0, false)
	b.movesAre(t, "ORDERS open", "ORDERS half_open", "ORDERS closed")
	if got := b.answer("orders", 3, 500, 0); got != nil {
		t.Errorf("closed afresh, refused: %v", got)
	}
	if _, s := b.ask("billing"); s != 0 {
		t.Errorf("an app without a breaker: %d", s)
	}
}

// A probe that fails, or is slow, opens the breaker again; a probe whose
// client went away gives its place back.
func TestBreakerProbeFailsOrIsAbandoned(t *testing.T) {
	b := newBreakerRouter(t, "apps:\n  orders:\n    breaker: {min_requests: 1, open: 1s, half_open_requests: 1, slow: 100ms}\n")
	b.answer("orders", 1, 502, 0)
	b.clock.Advance(time.Second)
	p, _ := b.ask("orders")
	p.Guard.Abandon(false)
	p, s := b.ask("orders")
	if s != 0 {
		t.Fatalf("the abandoned probe's place: %d", s)
	}
	p.Guard.Done(500, 0, false)
	b.movesAre(t, "ORDERS open", "ORDERS half_open", "ORDERS open")
	b.clock.Advance(time.Second)
	p, _ = b.ask("orders")
	p.Guard.Done(200, 100*time.Millisecond, false) // slow
	b.movesAre(t, "ORDERS open", "ORDERS half_open", "ORDERS open", "ORDERS half_open", "ORDERS open")
	b.clock.Advance(time.Second)
	p, _ = b.ask("orders")
	p.Guard.Done(200, 99*time.Millisecond, false)
	p.Guard.Done(500, 0, false) // a second end does nothing
	b.movesAre(t, "ORDERS open", "ORDERS half_open", "ORDERS open", "ORDERS half_open", "ORDERS open", "ORDERS half_open", "ORDERS closed")
}

// The window slides: failures older than window do not count; the slow
// ratio opens it too; consecutive failures open it below min_requests,
// and a success starts their count again.
func TestBreakerWindowSlowAndConsecutive(t *testing.T) {
	b := newBreakerRouter(t, `
apps:
  orders:
    breaker: {error_ratio: 0.5, min_requests: 4, window: 10s}
  billing:
    breaker: {error_ratio: 1, slow: 1s, slow_ratio: 0.5, min_requests: 4, consecutive_failures: 3}
`)
	b.answer("orders", 3, 500, 0)
	b.clock.Advance(10 * time.Second)
	b.answer("orders", 1, 500, 0)
	b.answer("orders", 3, 200, 0) // 1 failure in 4 within the window
	b.movesAre(t)
	b.answer("orders", 1, 503, 0) // 2 in 5
	b.answer("orders", 1, 504, 0) // 3 in 6
	b.movesAre(t, "ORDERS open")

	b.answer("billing", 2, 500, 0)
	b.answer("billing", 1, 200, 0)
	b.answer("billing", 2, 500, 0)
	b.movesAre(t, "ORDERS open")
	b.answer("billing", 1, 500, 0) // the third in a row
	b.movesAre(t, "ORDERS open", "BILLING open")

	b = newBreakerRouter(t, "apps:\n  billing:\n    breaker: {slow: 1s, slow_ratio: 0.5, min_requests: 4}\n")
	b.answer("billing", 2, 200, 999*time.Millisecond)
	b.answer("billing", 1, 200, time.Second)
	b.movesAre(t)
	b.answer("billing", 1, 200, 2*time.Second) // 2 slow in 4
	b.movesAre(t, "BILLING open")
}

// The defaults' breaker is each app's own; an app's breaker: off has
// none; a document put in force starts the breakers closed.
func TestBreakerDefaultsAndReload(t *testing.T) {
	doc := "defaults:\n  breaker: {min_requests: 2}\napps:\n  billing:\n    breaker: off\n"
	b := newBreakerRouter(t, doc)
	b.answer("orders", 2, 500, 0)
	b.answer("billing", 5, 500, 0)
	b.movesAre(t, "ORDERS open")
	if _, s := b.ask("billing"); s != 0 {
		t.Errorf("breaker: off refused: %d", s)
	}
	rules, err := ParseRules("rules.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	b.SetRules(rules)
	if _, s := b.ask("orders"); s != 0 {
		t.Errorf("after a reload: %d", s)
	}
	b.movesAre(t, "ORDERS open", "ORDERS closed")
}

// A retry budget lets at most max(min_concurrency, ratio × requests in
// flight) requests retry at once; a request's later retries need no more
// room; a retry refused is counted; a request that ends gives its room
// back.
func TestRetryBudget(t *testing.T) {
	b := newBreakerRouter(t, "apps:\n  orders:\n    retry_budget: {ratio: 0.5, min_concurrency: 1}\n")
	var routes []Route
	for range 6 {
		rt, s := b.ask("orders")
		if s != 0 || !rt.Guard.Held() {
			t.Fatalf("%d held=%v", s, rt.Guard.Held())
		}
		routes = append(routes, rt)
	}
	tries := make([]balancer.Retry, len(routes))
	retry := func(i int) bool {
		if tries[i].Attempt() == 0 {
			tries[i] = b.Retry(&routes[i], true)
			tries[i].Retries = 3
		}
		tries[i].Next()
		return tries[i].Failed(balancer.Refused)
	}
	// 6 in flight: room for 3.
	var got []bool
	for i := range 4 {
		got = append(got, retry(i))
	}
	if fmt.Sprint(got) != "[true true true false]" || b.denied != 1 {
		t.Fatalf("retries %v, %d denied", got, b.denied)
	}
	if !retry(0) {
		t.Error("a request's second retry was refused")
	}
	routes[0].Guard.Done(502, 0, true)
	routes[1].Guard.Abandon(true)
	routes[3].Guard.Done(502, 0, false)
	// 3 in flight (2, 4, 5), 1 retrying: room for max(1, 1) = 1.
	if retry(4) {
		t.Error("a retry past the budget")
	}
	routes[2].Guard.Done(502, 0, true)
	if !retry(5) {
		t.Error("no retry with the budget free")
	}
	if _, s := b.ask("billing"); s != 0 {
		t.Errorf("billing: %d", s)
	}
}

// A request through a closed breaker and a retry budget allocates
// nothing: the decision, the attempt and the end of its pass.
func TestBreakerAllocatesNothing(t *testing.T) {
	b := newBreakerRouter(t, "apps:\n  orders:\n    breaker: {}\n    retry_budget: {}\n")
	b.ask("orders")
	req := client("10.0.0.1")
	if n := testing.AllocsPerRun(1000, func() { guardedOnce(b.Router, req) }); n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}

func guardedOnce(r *Router, req *Request) {
	var buf [512]byte
	rt, _, _ := r.Route(buf[:0], []byte("/orders/items/7"), req)
	r.Limit(&rt, req)
	try := r.Retry(&rt, true)
	try.Next()
	try.Succeeded()
	rt.Guard.Done(200, time.Millisecond, false)
}

// BenchmarkBreaker is a request's decision through a closed breaker and a
// retry budget, and the end of its pass (BenchmarkRouteLimit/none is the
// same without them).
func BenchmarkBreaker(b *testing.B) {
	br := newBreakerRouter(b, "apps:\n  orders:\n    fallback: any\n    breaker: {}\n    retry_budget: {}\n")
	req := client("10.0.0.1")
	b.ReportAllocs()
	for b.Loop() {
		guardedOnce(br.Router, req)
	}
}

func TestBreakerDocumentRefused(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"apps:\n  ORDERS:\n    breaker: {error_ratio: 0}\n", `bad.yaml:3: apps.ORDERS.breaker.error_ratio: "0" is not a ratio above 0 and at most 1`},
		{"apps:\n  ORDERS:\n    breaker: {error_ratio: 1.5}\n", `bad.yaml:3: apps.ORDERS.breaker.error_ratio: "1.5" is not a ratio above 0 and at most 1`},
		{"apps:\n  ORDERS:\n    breaker:\n      window: 0s\n", `bad.yaml:4: apps.ORDERS.breaker.window: "0s" is not a duration above 0 and at most 1h0m0s`},
		{"apps:\n  ORDERS:\n    breaker: {open: 2h}\n", `bad.yaml:3: apps.ORDERS.breaker.open: "2h" is not a duration above 0`},
		{"apps:\n  ORDERS:\n    breaker: {slow: fast}\n", `bad.yaml:3: apps.ORDERS.breaker.slow: "fast" is not a duration`},
		{"apps:\n  ORDERS:\n    breaker: {half_open_requests: 0}\n", `bad.yaml:3: apps.ORDERS.breaker.half_open_requests: "0" is not a whole number from 1 to 1000000`},
		{"apps:\n  ORDERS:\n    breaker: {min_requests: -1}\n", `bad.yaml:3: apps.ORDERS.breaker.min_requests: "-1" is not a whole number`},
		{"apps:\n  ORDERS:\n    breaker: {consecutive_failures: 2000000}\n", `bad.yaml:3: apps.ORDERS.breaker.consecutive_failures: "2000000" is not a whole number from 1 to 1000000`},
		{"apps:\n  ORDERS:\n    breaker:\n      slow_ratio: 0.5\n", "bad.yaml:4: apps.ORDERS.breaker.slow_ratio: needs slow"},
		{"apps:\n  ORDERS:\n    breaker: {error_rate: 0.5}\n", `bad.yaml:3: apps.ORDERS.breaker.error_rate: unknown field "error_rate" (known: consecutive_failures, error_ratio, half_open_requests, min_requests, open, per_subset, slow, slow_ratio, window)`},
		{"apps:\n  ORDERS:\n    breaker: on\n", "bad.yaml:3: apps.ORDERS.breaker: is not a mapping"},
		{"apps:\n  ORDERS:\n    breaker: {per_subset: canary}\n", "bad.yaml:3: apps.ORDERS.breaker.per_subset: is not true or false"},
		{"defaults:\n  breaker:\n    per_subset: [true]\n", "bad.yaml:3: defaults.breaker.per_subset: is not true or false"},
		{"defaults:\n  retry_budget: {ratio: 0}\n", `bad.yaml:2: defaults.retry_budget.ratio: "0" is not a ratio above 0 and at most 1`},
		{"defaults:\n  retry_budget: {min_concurrency: -3}\n", `bad.yaml:2: defaults.retry_budget.min_concurrency: "-3" is not a whole number from 0 to 1000000`},
		{"defaults:\n  retry_budget: {percent: 20}\n", `bad.yaml:2: defaults.retry_budget.percent: unknown field "percent" (known: min_concurrency, ratio)`},
		{"defaults:\n  retry_budget: [1]\n", "bad.yaml:2: defaults.retry_budget: is not a mapping"},
	} {
		_, err := ParseRules("bad.yaml", []byte(c.doc))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s...", c.doc, err, c.want)
		}
	}
	for _, doc := range []string{"defaults:\n  breaker: {}\n  retry_budget: {}\n", "apps:\n  orders:\n    breaker: off\n    retry_budget: off\n"} {
		rules, err := ParseRules("good.yaml", []byte(doc))
		if err != nil {
			t.Errorf("%q: %v", doc, err)
		} else if rules.Guarded() != strings.HasPrefix(doc, "defaults") {
			t.Errorf("%q: Guarded %v", doc, rules.Guarded())
		}
	}
}

// Requests from many goroutines through a breaker that opens, probes and
// closes keep its counts whole: every pass ends, and once the app
// answers well the breaker closes and lets everything through (run with
// -race for the state's reads without a lock).
func TestBreakerConcurrent(t *testing.T) {
	b := newBreakerRouter(t, "apps:\n  orders:\n    breaker: {min_requests: 10, open: 1s, half_open_requests: 4}\n    retry_budget: {}\n")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				rt, s := b.ask("orders")
				if s != 0 {
					continue
				}
				status := 500
				if (g+i)%3 == 0 {
					status = 200
				}
				rt.Guard.Done(status, 0, false)
			}
		}()
	}
	wg.Wait()
	b.clock.Advance(time.Second)
	if got := b.answer("orders", 4, 200, 0); got != nil {
		t.Fatalf("the probes: %v", got)
	}
	if got := b.answer("orders", 20, 200, 0); got != nil {
		t.Errorf("closed again, refused: %v", got)
	}
	g := b.guards.Lookup("ORDERS").cur.Load()
	if n := g.budget.active.Load(); n != 0 {
		t.Errorf("%d requests left in flight", n)
	}
}
