package caddymodule

import (
	"fmt"
	"testing"

	"github.com/eurekagate/eurekagate/internal/gatewaysuite"
	"github.com/eurekagate/eurekagate/registry"
)

// eureka_gateway passes the same gateway suite as the fasthttp gateway.
func TestGatewaySuiteThroughCaddy(t *testing.T) {
	gatewaysuite.Run(t, func(t *testing.T) (string, *registry.Store) {
		name := newRegistry("gwsuite")
		// The suite's settings (see gatewaysuite.Starter).
		gw := fmt.Sprintf("response_header_timeout %s\n\t\tread_timeout %s\n\t\ttls_trusted_ca_certs %s",
			gatewaysuite.ResponseHeaderTimeout, gatewaysuite.ReadTimeout, gatewaysuite.TrustedCA(t))
		app := fmt.Sprintf("registry %s\n\t\thealth_interval %s", name, gatewaysuite.HealthInterval)
		loadConfig(t, gatewayConfig(app, gw))
		v, ok := lookupEntry(name)
		if !ok {
			t.Fatalf("registry %s not running", name)
		}
		return gatewayURL, v.store
	}, gatewaysuite.Caddy)
}
