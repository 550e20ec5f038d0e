package discovery

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

// ourServer runs our registry on loopback.
type ourServer struct {
	store *registry.Store
	srv   *httpapi.Server
	addr  string
}

func startOurServer(t *testing.T, addr string) *ourServer {
	t.Helper()
	store := registry.New(registry.Config{})
	srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: addr})
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
