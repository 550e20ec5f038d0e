package discovery

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/leaktest"
	"github.com/eurekagate/eurekagate/registry"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

// eventually polls cond until it holds, failing after a few seconds. It
// waits for network round trips, never for leases to expire.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ourServer runs our registry on loopback.
type ourServer struct {
	store *registry.Store
	srv   *registry.Server
	addr  string
}

func startOurServer(t *testing.T, addr string) *ourServer {
	t.Helper()
	store := registry.New(registry.Config{})
	srv := registry.NewServer(registry.NewAPI(store, registry.APIConfig{}), registry.ServerConfig{Addr: addr})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	s := &ourServer{store: store, srv: srv, addr: srv.Addr().String()}
	t.Cleanup(s.stop)
	return s
}

func (s *ourServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.srv.Stop(ctx)
}

func (s *ourServer) url() string { return "http://" + s.addr + "/eureka/" }

func stopClient(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Error(err)
	}
}

func seededRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }
