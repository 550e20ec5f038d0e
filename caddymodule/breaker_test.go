package caddymodule

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// A breaker in eureka_gateway's rules opens on its app's failure (an
// instance that refuses connections: 502) and answers 503 with its
// reason; Caddy's access log entry says "breaker":"open", and the
// metrics have the state and the refusal.
func TestGatewayBreakerOpen(t *testing.T) {
	doc := "apps:\n  ORDERS:\n    breaker: {consecutive_failures: 1, open: 1h}"
	name := newRegistry("breaker-open")
	logFile := loggedGatewayOf(t, name, doc)
	inst := versionBackend(t, "orders", "2.0")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	inst.Port.Number = l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there: the instance refuses every connection
	registerVia(t, registryURL, inst)
	for i, want := range []int{502, 503} {
		if status, body := get(t, gatewayURL+"/orders/x"); status != want {
			t.Fatalf("request %d: %d %q, want %d", i, status, body, want)
		}
	}
	testkit.Eventually(t, 5*time.Second, "the 503's access log entry", func() bool {
		data, _ := os.ReadFile(logFile)
		return strings.Contains(string(data), `"breaker":"open"`) && strings.Contains(string(data), `"status":503`)
	})
	_, metrics := do(t, "GET", adminURL+"/metrics", nil)
	for _, want := range []string{`caddy_eureka_gateway_breaker_state{app="ORDERS"} 1`, `caddy_eureka_gateway_breaker_rejected_total{app="ORDERS"} 1`,
		`caddy_eureka_gateway_breaker_transitions_total{app="ORDERS",to="open"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("no %s in the metrics", want)
		}
	}

	// A reload starts the breaker closed, and the metrics say so (their
	// counts kept); the request that follows reaches the instance.
	loggedGatewayOf(t, name, doc) // another log file: another config
	_, metrics = do(t, "GET", adminURL+"/metrics", nil)
	if want := `caddy_eureka_gateway_breaker_state{app="ORDERS"} 0`; !strings.Contains(metrics, want) {
		t.Errorf("after a reload, no %s in the metrics", want)
	}
	if status, body := get(t, gatewayURL+"/orders/x"); status != 502 {
		t.Errorf("after a reload: %d %q, want the instance's 502", status, body)
	}
}

// The eureka upstream source refuses rules with breakers or retry
// budgets, which only eureka_gateway decides, rather than ignore them.
func TestUpstreamSourceRefusesBreakers(t *testing.T) {
	for _, policy := range []string{"breaker: {}", "retry_budget: {}"} {
		err := upstreamSourceRules(t, policy)
		if err == nil || !strings.Contains(err.Error(), "circuit breakers and retry budgets (breaker, retry_budget) are decided by eureka_gateway") {
			t.Errorf("%s in the upstream source's rules: %v", policy, err)
		}
	}
}
