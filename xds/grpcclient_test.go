package xds_test

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	xdsresolver "google.golang.org/grpc/xds"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/xds"
)

// xdsConn dials target through grpc-go's own xDS resolver, bootstrapped to
// e's server.
func xdsConn(t *testing.T, e *env, target string) *grpc.ClientConn {
	t.Helper()
	builder, err := xdsresolver.NewXDSResolverWithConfigForTesting(e.bootstrap(t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithResolvers(builder))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// reached calls n times and returns the backends that answered; a failed
// call is recorded as "error".
func reached(conn *grpc.ClientConn, n int) map[string]bool {
	seen := map[string]bool{}
	for range n {
		name, err := who(conn, 2*time.Second)
		if err != nil {
			name = "error"
		}
		seen[name] = true
	}
	return seen
}

// eventuallyReaches polls until n calls reach exactly the backends want.
func eventuallyReaches(t *testing.T, conn *grpc.ClientConn, want ...string) {
	t.Helper()
	var last map[string]bool
	testkit.Eventually(t, 10*time.Second, "RPCs reach "+strings.Join(want, " "), func() bool {
		last = reached(conn, 12)
		return slices.Equal(slices.Sorted(maps.Keys(last)), slices.Sorted(slices.Values(want)))
	})
}

// A grpc-go client dialing xds:///orders reaches ORDERS' UP instances
// registered through Eureka's REST API, on their gRPC_port; a status
// taken out of service, a cancel and a new registration move its RPCs.
func TestGRPCGoXDSClientFollowsTheRegistry(t *testing.T) {
	e := newEnv(t, xds.Config{})
	a, b, c, d := backend(t, "a"), backend(t, "b"), backend(t, "c"), backend(t, "d")
	e.register(t, "ORDERS", "a", a, nil)
	e.register(t, "ORDERS", "b", b, map[string]string{"zone": "z2"})
	e.register(t, "USERS", "d", d, nil)

	conn := xdsConn(t, e, "xds:///orders")
	eventuallyReaches(t, conn, "a", "b")

	e.send(t, http.MethodPut, "/apps/ORDERS/b/status?value=OUT_OF_SERVICE", http.StatusOK)
	eventuallyReaches(t, conn, "a")

	e.register(t, "ORDERS", "c", c, nil)
	eventuallyReaches(t, conn, "a", "c")

	e.send(t, http.MethodDelete, "/apps/ORDERS/a", http.StatusOK)
	eventuallyReaches(t, conn, "c")

	e.send(t, http.MethodDelete, "/apps/ORDERS/b/status?value=UP", http.StatusOK)
	eventuallyReaches(t, conn, "b", "c")
}

// A client reaches ORDERS in whatever case it spells the name, and a name
// no app has fails its RPCs at once (UNAVAILABLE) rather than leaving them
// waiting, until an app of that name registers.
func TestGRPCGoXDSClientNamesInAnyCase(t *testing.T) {
	e := newEnv(t, xds.Config{})
	e.register(t, "ORDERS", "a", backend(t, "a"), nil)
	eventuallyReaches(t, xdsConn(t, e, "xds:///Orders"), "a")
	eventuallyReaches(t, xdsConn(t, e, "xds:///ORDERS"), "a")

	later := xdsConn(t, e, "xds:///later")
	start := time.Now()
	if name, err := who(later, 5*time.Second); status.Code(err) != codes.Unavailable {
		t.Fatalf("an app nobody registered: %q %v, want UNAVAILABLE", name, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("an app nobody registered failed after %v", d)
	}
	e.register(t, "LATER", "l", backend(t, "l"), nil)
	eventuallyReaches(t, later, "l")
}

// A Config the server cannot honour is refused by name.
func TestConfigRefusesUnknownPolicy(t *testing.T) {
	_, err := xds.New(registry.New(registry.Config{}), xds.Config{Policy: "fastest"})
	if err == nil || !strings.Contains(err.Error(), `Policy: "fastest"`) {
		t.Fatalf("got %v", err)
	}
}
