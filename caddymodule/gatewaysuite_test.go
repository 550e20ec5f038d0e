package caddymodule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"

	"github.com/eurekagate/eurekagate/internal/gatewaysuite"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// eureka_gateway passes the same gateway suite as the fasthttp gateway,
// with its own transport (the default).
func TestGatewaySuiteThroughCaddy(t *testing.T) {
	gatewaysuite.Run(t, suiteGateway(""), gatewaysuite.Caddy)
}

// And with transport reverse_proxy.
func TestGatewaySuiteThroughCaddyReverseProxy(t *testing.T) {
	gatewaysuite.Run(t, suiteGateway("\n\t\ttransport reverse_proxy"), gatewaysuite.Caddy)
}

// suiteGateway is the suite's Starter of eureka_gateway, with options,
// more lines of its block.
func suiteGateway(options string) gatewaysuite.Starter {
	return func(t *testing.T) (string, *registry.Store, gatewaysuite.Metrics) {
		name := newRegistry("gwsuite")
		// The suite's settings (see gatewaysuite.Starter); the server has
		// no trusted_proxies.
		gw := fmt.Sprintf("response_header_timeout %s\n\t\tread_timeout %s\n\t\ttls_trusted_ca_certs %s\n\t\tfailover_regions %s",
			gatewaysuite.ResponseHeaderTimeout, gatewaysuite.ReadTimeout, gatewaysuite.TrustedCA(t), gatewaysuite.Region) + options
		// The remote region's servers never answer: the suite feeds it
		// with regions.Mirror.Update.
		app := fmt.Sprintf("registry %s\n\t\thealth_interval %s\n\t\tremote_regions %s http://127.0.0.1:%d/eureka/",
			name, gatewaysuite.HealthInterval, gatewaysuite.Region, testkit.FreePort(t))
		loadConfigAs(t, withGatewayRules(t, gatewayConfig(app, gw), json.RawMessage(gatewaysuite.Rules)), "json")
		v, ok := lookupEntry(name)
		if !ok {
			t.Fatalf("registry %s not running", name)
		}
		return gatewayURL, v.store, gatewaysuite.Metrics{Namespace: "caddy_eureka", Scrape: scrapeAdmin}
	}
}

// scrapeAdmin returns what the admin endpoint's /metrics serves: the
// running config's metrics, those of its registry's gateways among them.
func scrapeAdmin(t *testing.T) string {
	t.Helper()
	status, body := do(t, "GET", adminURL+"/metrics", nil)
	if status != 200 {
		t.Fatalf("admin /metrics: %d %.300s", status, body)
	}
	return body
}

// withGatewayRules adapts cfg, a test Caddyfile with one eureka_gateway,
// to JSON and puts rules, a rules document in JSON, in the handler's
// "rules" field.
func withGatewayRules(t *testing.T, cfg string, rules json.RawMessage) string {
	t.Helper()
	if !json.Valid(rules) {
		t.Fatal("the rules document is not JSON")
	}
	out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cfg), nil)
	if err != nil {
		t.Fatalf("adapting: %v", err)
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber() // durations in nanoseconds stay as they are
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	found := 0
	eachHandler(doc, "eureka_gateway", func(h map[string]any) {
		h["rules"] = rules
		found++
	})
	if found != 1 {
		t.Fatalf("the adapted config has %d eureka_gateway handlers, want 1", found)
	}
	out, err = json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
