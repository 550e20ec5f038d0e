package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/routing"
)

// An app's breaker opens on its instance's 500 on both paths: the next
// request gets the breaker's 503 and headers, its access log line says
// "breaker":"open", and the move is logged once.
func TestBreakerLoggedOnce(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := registry.New(registry.Config{})
			serve(t, store, "orders", "o1", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
			rules, err := routing.ParseRules("test", []byte("apps:\n  orders:\n    breaker: {consecutive_failures: 1, open: 1h}\n"))
			if err != nil {
				t.Fatal(err)
			}
			core, logs := observer.New(zapcore.InfoLevel)
			var log logBuffer
			base, g, _ := startServer(t, Config{AccessLog: &log, Logger: zap.New(core)}, ServerConfig{Loops: m.loops}, store)
			g.Router().SetRules(rules)
			for i, want := range []int{500, 503, 503} {
				status, h, _ := do(t, "GET", base+"/orders/x", nil)
				if status != want || (want == 503 && (h.Get(routing.BreakerReasonHeader) != "circuit open" || h.Get("Retry-After") != "3600")) {
					t.Fatalf("request %d: %d %v, want %d", i, status, h, want)
				}
			}
			lines := log.waitLines(t, 3, 5*time.Second)
			if l := lines[0]; l.Status != 500 || l.Breaker != "" {
				t.Errorf("the failed request: %+v", l)
			}
			if l := lines[1]; l.Status != 503 || l.Breaker != "open" || l.App != "ORDERS" || l.Instance != "" {
				t.Errorf("the request the breaker refused: %+v", l)
			}
			moves := logs.FilterMessage("circuit breaker moved").All()
			if len(moves) != 1 || moves[0].Level != zapcore.WarnLevel || moves[0].ContextMap()["to"] != "open" || moves[0].ContextMap()["app"] != "ORDERS" {
				t.Errorf("logged moves: %v", moves)
			}
		})
	}
}

// A gateway that counts no traffic and logs no access still ends each
// request's pass: its breakers open.
func TestBreakerWithoutTraffic(t *testing.T) {
	store := registry.New(registry.Config{})
	serve(t, store, "orders", "o1", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) })
	rules, err := routing.ParseRules("test", []byte("apps:\n  orders:\n    breaker: {min_requests: 2, open: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	base, g, _ := startServer(t, Config{DisableTraffic: true}, ServerConfig{}, store)
	g.Router().SetRules(rules)
	for i, want := range []int{502, 502, 503} {
		if status, _, _ := do(t, "GET", base+"/orders/x", nil); status != want {
			t.Fatalf("request %d: %d, want %d", i, status, want)
		}
	}
}

// A reload of the rules starts every breaker closed, and the metrics say
// so at once, whether the new document keeps the app's breaker (no
// request has come since) or drops it (none will ask the breaker again).
// A request let through by the old document that fails after the reload
// moves no breaker the metrics show.
func TestBreakerStateAfterReload(t *testing.T) {
	store := registry.New(registry.Config{})
	release := make(chan struct{})
	serve(t, store, "orders", "o1", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/held" {
			<-release
		}
		w.WriteHeader(500)
	})
	parse := func(doc string) *routing.Rules {
		rules, err := routing.ParseRules("test", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return rules
	}
	breaker := "apps:\n  orders:\n    breaker: {consecutive_failures: 1, open: 1h}\n"
	base, g, _ := startServer(t, Config{}, ServerConfig{}, store)
	metrics := suiteMetrics(g)
	state := func(want string) {
		t.Helper()
		if m := metrics.Scrape(t); !strings.Contains(m, `eureka_gateway_breaker_state{app="ORDERS",subset=""} `+want) {
			t.Errorf("no breaker_state %s in\n%s", want, m)
		}
	}
	for _, next := range []string{breaker, "apps:\n  orders:\n    breaker: off\n"} {
		g.Router().SetRules(parse(breaker))
		for i, want := range []int{500, 503} {
			if status, _, _ := do(t, "GET", base+"/orders/x", nil); status != want {
				t.Fatalf("request %d: %d, want %d", i, status, want)
			}
		}
		state("1")
		g.Router().SetRules(parse(next))
		state("0")
		if status, _, _ := do(t, "GET", base+"/orders/x", nil); status != 500 {
			t.Fatalf("after the reload: %d, want the instance's 500", status)
		}
	}

	// Let through by a closed breaker, failing after the reload.
	g.Router().SetRules(parse(breaker))
	held := make(chan int)
	go func() {
		status, _, _ := do(t, "GET", base+"/orders/held", nil)
		held <- status
	}()
	testkit.Eventually(t, 5*time.Second, "the held request in flight", func() bool {
		return strings.Contains(metrics.Scrape(t), `eureka_gateway_requests_in_flight{app="ORDERS"} 1`)
	})
	g.Router().SetRules(parse("apps:\n  orders:\n    breaker: off\n"))
	close(release)
	if status := <-held; status != 500 {
		t.Fatalf("the held request: %d", status)
	}
	state("0")
}
