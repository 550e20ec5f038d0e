package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/gatewaysuite"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

// start serves a gateway over store on a free loopback port until the test
// ends, and returns its base URL and the gateway.
func start(t *testing.T, cfg Config, store *registry.Store) (string, *Gateway, *Server) {
	t.Helper()
	if cfg.Instances == nil {
		cfg.Instances = store
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(g, ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		g.Close()
	})
	return "http://" + srv.Addr().String(), g, srv
}

// The shared gateway suite, which Caddy's eureka_gateway passes too.
func TestGatewaySuite(t *testing.T) {
	gatewaysuite.Run(t, func(t *testing.T) (string, *registry.Store) {
		store := registry.New(registry.Config{})
		base, _, _ := start(t, Config{}, store)
		return base, store
	})
}
