package caddymodule

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/gatewaysuite"
)

// A trusted proxy's X-Request-Id (the server's trusted_proxies) reaches
// the instance as it came, one copy of it; the shared suite checks an
// untrusted client's (RequestIDs).
func TestTrustedProxyRequestIDThroughCaddy(t *testing.T) {
	name := newRegistry("request-id")
	loadConfig(t, testConfig("servers {\n\t\ttrusted_proxies static 127.0.0.0/8\n\t}", "registry "+name,
		site(registryPort, "\teureka_server"), site(gatewayPort, "\teureka_gateway")))
	v, ok := lookupEntry(name)
	if !ok {
		t.Fatalf("registry %s not running", name)
	}
	gatewaysuite.RequestIDs(t, gatewayURL, v.store, true)
}
