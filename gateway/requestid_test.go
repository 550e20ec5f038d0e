package gateway

import (
	"net/netip"
	"testing"

	"github.com/eurekagate/eurekagate/internal/gatewaysuite"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/routing"
)

// A trusted proxy's X-Request-Id reaches the instance as it came, one
// copy of it, on both of the server's paths; the shared suite checks an
// untrusted client's (RequestIDs).
func TestTrustedProxyRequestID(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := registry.New(registry.Config{})
			cfg := Config{Routing: routing.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
			base, _, _ := startServer(t, cfg, ServerConfig{Loops: m.loops}, store)
			gatewaysuite.RequestIDs(t, base, store, true)
		})
	}
}
