package caddymodule

import (
	"fmt"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/eurekagate/eurekagate/internal/gatewaysuite"
	"github.com/eurekagate/eurekagate/registry"
)

// eureka_gateway passes the same gateway suite as the fasthttp gateway.
func TestGatewaySuiteThroughCaddy(t *testing.T) {
	n := 0
	gatewaysuite.Run(t, func(t *testing.T) (string, *registry.Store) {
		n++
		name := fmt.Sprintf("gwsuite-%d", n)
		caddytest.NewTester(t).InitServer(gatewayConfig("registry "+name, ""), "caddyfile")
		v, ok := lookupEntry(name)
		if !ok {
			t.Fatalf("registry %s not running", name)
		}
		return gatewayURL, v.store
	}, gatewaysuite.Caddy)
}
