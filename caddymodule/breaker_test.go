package caddymodule

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
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
	inst.Port.Number = testkit.FreePort(t) // nothing listens there: the instance refuses every connection
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
	for _, want := range []string{`caddy_eureka_gateway_breaker_state{app="ORDERS",subset=""} 1`, `caddy_eureka_gateway_breaker_rejected_total{app="ORDERS",subset=""} 1`,
		`caddy_eureka_gateway_breaker_transitions_total{app="ORDERS",subset="",to="open"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("no %s in the metrics", want)
		}
	}

	// A reload starts the breaker closed, and the metrics say so (their
	// counts kept); the request that follows reaches the instance.
	loggedGatewayOf(t, name, doc) // another log file: another config
	_, metrics = do(t, "GET", adminURL+"/metrics", nil)
	if want := `caddy_eureka_gateway_breaker_state{app="ORDERS",subset=""} 0`; !strings.Contains(metrics, want) {
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

// A half-open breaker's probe whose response breaks after its header
// (the instance resets the connection mid-body), through either
// transport (reverse_proxy then panics with http.ErrAbortHandler): the
// probe still ends, so its place is not held for good and the breaker
// does not stay half-open refusing every request. The client had its
// 200: the probe succeeded, and the breaker closes.
func TestBreakerProbeWithABrokenBody(t *testing.T) {
	for _, transport := range []string{"eureka", "reverse_proxy"} {
		t.Run(transport, func(t *testing.T) { breakerProbeWithABrokenBody(t, transport) })
	}
}

func breakerProbeWithABrokenBody(t *testing.T, transport string) {
	var broken atomic.Int32 // 0: 500, 1: a broken body, 2: 200
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch broken.Load() {
		case 0:
			w.WriteHeader(500)
		case 1:
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(200)
			w.Write([]byte("part"))
			http.NewResponseController(w).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
			}
		default:
			w.Write([]byte("ok"))
		}
	}))
	t.Cleanup(srv.Close)
	doc := "apps:\n  ORDERS:\n    breaker: {consecutive_failures: 1, open: 50ms, half_open_requests: 1}"
	loadConfig(t, gatewayConfig("registry "+newRegistry("breaker-broken"), "transport "+transport+"\n\t\t"+rulesHeredoc(doc)))
	inst := versionBackend(t, "orders", "2.0")
	inst.Port.Number = srv.Listener.Addr().(*net.TCPAddr).Port
	registerVia(t, registryURL, inst)
	if status, body := get(t, gatewayURL+"/orders/x"); status != 500 {
		t.Fatalf("the failing instance: %d %q", status, body)
	}
	broken.Store(1)
	// Once open has passed, the probe gets the broken body.
	testkit.Eventually(t, 5*time.Second, "the probe's broken body", func() bool {
		resp, err := client.Get(gatewayURL + "/orders/x")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return resp.StatusCode == 200 && err != nil
	})
	broken.Store(2)
	testkit.Eventually(t, 5*time.Second, "the breaker closed after its probe", func() bool {
		status, _ := get(t, gatewayURL+"/orders/x")
		return status == 200
	})
}
