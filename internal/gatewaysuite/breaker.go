package gatewaysuite

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// The cases in this file check the traffic rules' circuit breakers and
// retry budgets (the apps BREAKER-* and BUDGET of Rules) through both
// gateways: what reaches the instances, what the clients get, and the
// metrics.

// breakerReason is the body of BREAKER-5XX's 503 while open.
const breakerReason = "circuit open: BREAKER-5XX is failing, its requests are refused for 300ms before 2 probes\n"

// countingInstance is an instance that counts the requests it gets, tells each
// on arrivals, and answers status, holding each request until hold is
// closed when it is not nil.
type countingInstance struct {
	got      atomic.Int64
	status   atomic.Int64
	arrivals chan struct{}
	mu       sync.Mutex
	hold     chan struct{}
}

func (c *countingInstance) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.got.Add(1)
	select {
	case c.arrivals <- struct{}{}:
	default:
	}
	c.mu.Lock()
	hold := c.hold
	c.mu.Unlock()
	if hold != nil {
		<-hold
	}
	w.WriteHeader(int(c.status.Load()))
}

func (c *countingInstance) holding(h chan struct{}) {
	c.mu.Lock()
	c.hold = h
	c.mu.Unlock()
}

// An app whose instance answers 500: its breaker (min_requests 5, error
// ratio 0.5, open 300ms, 2 probes) opens at the fifth answer, within the
// window; while open no request reaches the instance and each gets the
// breaker's 503 with its reason; once open has passed, two probes go
// through and no more while they are out; the instance recovered, they
// succeed and the breaker closes. The metrics count the moves and the
// refusals.
func breakerOpensAndCloses(t *testing.T, start Starter) {
	base, store, m := start(t)
	inst := countingInstance{arrivals: make(chan struct{}, 16)}
	inst.status.Store(500)
	b := newBackend(t, "a", &inst)
	register(t, store, instance("breaker-5xx", "a", b.port))
	url := base + "/breaker-5xx/x"
	c := keepAlive(t)
	expectStatuses(t, "the failing instance's answers", statuses(t, c, url, 5), 500, 500, 500, 500, 500)

	r, err := ask(c, url)
	if err != nil {
		t.Fatal(err)
	}
	if r.status != 503 || r.body != breakerReason || r.header.Get("Eurekagate-Reason") != "circuit open" || r.header.Get("Retry-After") != "1" {
		t.Fatalf("once open: %d %q %v", r.status, r.body, r.header)
	}
	if got := inst.got.Load(); got != 5 {
		t.Fatalf("the instance got %d requests, want the 5 before the breaker opened", got)
	}

	// Half-open: the probes reach the instance, which holds them; a
	// request is sent at a time until two are held, each refused one
	// having reached nothing.
	hold := make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release) // before the instance's server closes, should the test stop early
	inst.holding(hold)
	for len(inst.arrivals) > 0 {
		<-inst.arrivals // the five before
	}
	inst.status.Store(200)
	probes := make(chan int, 2)
	refused := 1
	deadline := time.Now().Add(10 * time.Second)
	for inst.got.Load() < 7 {
		if time.Now().After(deadline) {
			t.Fatalf("no two probes within 10s: the instance got %d", inst.got.Load())
		}
		before := inst.got.Load()
		done := make(chan reply, 1)
		go func() {
			r, err := ask(c, url)
			if err != nil {
				r.body = err.Error()
			}
			done <- r
		}()
		select {
		case r := <-done:
			if r.status != 503 || inst.got.Load() != before {
				t.Fatalf("while open: %d %q, the instance got %d then %d", r.status, r.body, before, inst.got.Load())
			}
			refused++
		case <-inst.arrivals:
			go func() { probes <- (<-done).status }()
		}
	}
	expectStatuses(t, "with two probes out", statuses(t, c, url, 3), 503, 503, 503)
	refused += 3
	if got := inst.got.Load(); got != 7 {
		t.Fatalf("the instance got %d requests, want 5 and 2 probes", got)
	}
	release()
	expectStatuses(t, "the probes", []int{<-probes, <-probes}, 200, 200)
	testkit.Eventually(t, 5*time.Second, "the breaker closed", func() bool {
		return m.read(t).sum("breaker_state", "app", "BREAKER-5XX") == 0
	})
	expectStatuses(t, "closed", statuses(t, c, url, 3), 200, 200, 200)

	s := m.read(t)
	for to, want := range map[string]float64{"open": 1, "half_open": 1, "closed": 1} {
		if got := s.sum("breaker_transitions_total", "app", "BREAKER-5XX", "to", to); got != want {
			t.Errorf("breaker_transitions_total to %s: %v, want %v", to, got, want)
		}
	}
	if got := s.sum("breaker_rejected_total", "app", "BREAKER-5XX"); got != float64(refused) {
		t.Errorf("breaker_rejected_total %v, want %d", got, refused)
	}
}

// An app whose instance answers slower than the breaker's slow (100ms):
// two slow answers of two open it, and the next request reaches nothing.
func breakerSlow(t *testing.T, start Starter) {
	base, store, m := start(t)
	var got atomic.Int64
	b := newBackend(t, "a", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		time.Sleep(150 * time.Millisecond) // the slow answer itself
	}))
	register(t, store, instance("breaker-slow", "a", b.port))
	c := keepAlive(t)
	url := base + "/breaker-slow/x"
	expectStatuses(t, "slow answers", statuses(t, c, url, 2), 200, 200)
	expectStatuses(t, "once open", statuses(t, c, url, 2), 503, 503)
	if n := got.Load(); n != 2 {
		t.Errorf("the instance got %d requests, want 2", n)
	}
	if s := m.read(t).sum("breaker_state", "app", "BREAKER-SLOW"); s != 1 {
		t.Errorf("breaker_state %v, want 1 (open)", s)
	}
}

// Every instance failing (each breaks its connection) and retries on, ten
// requests at once: a retry budget of max(3, 0.2 × 10) lets at most 3 of
// them retry, the others get the failure's 502 (504 after a timeout);
// the instances see each retry, and the metrics count the retries and
// the budget's refusals.
func retryBudget(t *testing.T, start Starter) {
	base, store, m := start(t)
	const n = 10
	var got atomic.Int64
	first, later := make(chan struct{}), make(chan struct{})
	releaseFirst := sync.OnceFunc(func() { close(first) })
	broken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait := first
		if got.Add(1) > n {
			wait = later // a retry: held until the gateway gives up on it
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		select {
		case <-wait:
		case <-r.Context().Done():
		}
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	})
	for _, id := range []string{"a", "b"} {
		register(t, store, instance("budget", id, newBackend(t, id, broken).port))
	}
	t.Cleanup(func() { releaseFirst(); close(later) }) // the held handlers end, however the test does
	var wg sync.WaitGroup
	answers := make(chan reply, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := ask(client(), base+"/budget/x")
			if err != nil {
				r.body = err.Error()
			}
			answers <- r
		}()
	}
	testkit.Eventually(t, 10*time.Second, "the first attempts at the instances", func() bool { return got.Load() >= n })
	releaseFirst()
	wg.Wait()
	close(answers)
	for r := range answers {
		if r.status != 502 && r.status != 504 {
			t.Errorf("a client got %d %q, want 502 or 504", r.status, r.body)
		}
	}
	retried := got.Load() - n
	s := m.read(t)
	exhausted, retries := s.sum("retries_budget_exhausted_total", "app", "BUDGET"), s.sum("retries_total", "app", "BUDGET")
	t.Logf("%d retries made, %v refused by the budget", retried, exhausted)
	if retried > 3 || retried < 1 {
		t.Errorf("%d retries reached the instances, want 1 to 3", retried)
	}
	if retries != float64(retried) || exhausted != float64(n-retried) {
		t.Errorf("retries_total %v, retries_budget_exhausted_total %v: want %d and %d", retries, exhausted, retried, n-retried)
	}
}

// An app with a limit (burst 4 an hour) and a breaker that opens at its
// first failure: each request, the breaker's 503s too, takes one place
// of the limit, not two (the loops once decided a refused request again
// on the fasthttp path), and each refusal is counted once.
func limitThenBreaker(t *testing.T, start Starter) {
	base, store, m := start(t)
	inst := countingInstance{arrivals: make(chan struct{}, 16)}
	inst.status.Store(500)
	register(t, store, instance("limit-breaker", "a", newBackend(t, "a", &inst).port))
	expectStatuses(t, "the failure, the breaker's 503s, the limit's 429", statuses(t, keepAlive(t), base+"/limit-breaker/x", 5), 500, 503, 503, 503, 429)
	s := m.read(t)
	if limited, refused := s.sum("requests_limited_total", "app", "LIMIT-BREAKER"), s.sum("breaker_rejected_total", "app", "LIMIT-BREAKER"); limited != 1 || refused != 3 {
		t.Errorf("requests_limited_total %v, breaker_rejected_total %v: want 1 and 3", limited, refused)
	}
	if got := inst.got.Load(); got != 1 {
		t.Errorf("the instance got %d requests, want 1", got)
	}
}
