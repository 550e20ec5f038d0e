package caddymodule

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// A rate limit in eureka_gateway's rules (a Caddyfile heredoc) answers
// 429 past its burst; Caddy's access log entry names the limit, and the
// metrics count it.
func TestGatewayAccessLogLimited(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "access.log")
	name := newRegistry("access-limited")
	rules := rulesHeredoc("apps:\n  ORDERS:\n    limits: [{key: client, rate: 1/h, burst: 1}]")
	cfg := testConfig("metrics", "registry "+name, site(registryPort, "\teureka_server"),
		site(gatewayPort, "\tlog {\n\t\toutput file "+logFile+"\n\t\tformat json\n\t}\n\teureka_gateway {\n\t\t"+rules+"\n\t}"))
	loadConfig(t, cfg)
	registerVia(t, registryURL, versionBackend(t, "orders", "2.0"))
	for i, want := range []int{200, 429} {
		if status, body := get(t, gatewayURL+"/orders/x"); status != want {
			t.Fatalf("request %d: %d %q, want %d", i, status, body, want)
		}
	}
	testkit.Eventually(t, 5*time.Second, "the 429's access log entry", func() bool {
		data, _ := os.ReadFile(logFile)
		return strings.Contains(string(data), `"limited":"client"`) && strings.Contains(string(data), `"status":429`)
	})
	_, metrics := do(t, "GET", adminURL+"/metrics", nil)
	if want := `caddy_eureka_gateway_requests_limited_total{app="ORDERS"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("no %s in the metrics", want)
	}
}
