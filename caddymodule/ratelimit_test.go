package caddymodule

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// A rate limit in eureka_gateway's rules (a Caddyfile heredoc) answers
// 429 past its burst; Caddy's access log entry names the limit, and the
// metrics count it.
func TestGatewayAccessLogLimited(t *testing.T) {
	logFile := loggedGateway(t, "access-limited", "apps:\n  ORDERS:\n    limits: [{key: client, rate: 1/h, burst: 1}]")
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

// loggedGateway loads a config of a registry named for base and a
// gateway with the rules doc, its access log in JSON, and returns the
// log's file.
func loggedGateway(t *testing.T, base, doc string) string {
	return loggedGatewayOf(t, newRegistry(base), doc)
}

// loggedGatewayOf is loggedGateway over the registry named name: a config
// loaded again with the same name reloads the gateway over the registry
// the app keeps.
func loggedGatewayOf(t *testing.T, name, doc string) string {
	logFile := filepath.Join(t.TempDir(), "access.log")
	cfg := testConfig("metrics", "registry "+name, site(registryPort, "\teureka_server"),
		site(gatewayPort, "\tlog {\n\t\toutput file "+logFile+"\n\t\tformat json\n\t}\n\teureka_gateway {\n\t\t"+rulesHeredoc(doc)+"\n\t}"))
	loadConfig(t, cfg)
	return logFile
}

// upstreamSourceRules validates a config whose eureka upstream source has
// rules of app ORDERS with line, and returns Caddy's error.
func upstreamSourceRules(t *testing.T, line string) error {
	cfg := "{\n\tadmin off\n}\nhttp://:1 {\n\treverse_proxy {\n\t\tdynamic eureka orders {\n\t\t\trules <<YAML\n\t\t\tapps:\n\t\t\t  ORDERS:\n\t\t\t    " + line + "\n\t\t\tYAML\n\t\t}\n\t}\n}\n"
	adapted, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	var c caddy.Config
	if err := json.Unmarshal(adapted, &c); err != nil {
		t.Fatal(err)
	}
	return caddy.Validate(&c)
}

// The eureka upstream source refuses rules with rate limits, which only
// eureka_gateway decides, rather than ignore them.
func TestUpstreamSourceRefusesLimits(t *testing.T) {
	err := upstreamSourceRules(t, "limits: [{key: client, rate: 1/s}]")
	if err == nil || !strings.Contains(err.Error(), "rate limits (limits) are decided by eureka_gateway, not by the eureka upstream source") {
		t.Fatalf("limits in the upstream source's rules: %v", err)
	}
}
