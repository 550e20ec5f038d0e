package xds_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/eurekagate/eurekagate/internal/xdstest"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/xds"
)

// A grpc-go client dialing xds:///orders reaches ORDERS' UP instances
// registered through Eureka's REST API, on their gRPC_port; a status
// taken out of service, a cancel and a new registration move its RPCs.
func TestGRPCGoXDSClientFollowsTheRegistry(t *testing.T) {
	e := newEnv(t, xds.Config{})
	a, b, c, d := xdstest.Backend(t, "a"), xdstest.Backend(t, "b"), xdstest.Backend(t, "c"), xdstest.Backend(t, "d")
	e.register(t, "ORDERS", "a", a, nil)
	e.register(t, "ORDERS", "b", b, map[string]string{"zone": "z2"})
	e.register(t, "USERS", "d", d, nil)

	conn := e.conn(t, "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "a", "b")

	e.send(t, http.MethodPut, "/apps/ORDERS/b/status?value=OUT_OF_SERVICE", http.StatusOK)
	xdstest.EventuallyReaches(t, conn, "a")

	e.register(t, "ORDERS", "c", c, nil)
	xdstest.EventuallyReaches(t, conn, "a", "c")

	e.send(t, http.MethodDelete, "/apps/ORDERS/a", http.StatusOK)
	xdstest.EventuallyReaches(t, conn, "c")

	e.send(t, http.MethodDelete, "/apps/ORDERS/b/status?value=UP", http.StatusOK)
	xdstest.EventuallyReaches(t, conn, "b", "c")
}

// A client reaches ORDERS in whatever case it spells the name, and a name
// no app has fails its RPCs at once (UNAVAILABLE) rather than leaving them
// waiting, until an app of that name registers.
func TestGRPCGoXDSClientNamesInAnyCase(t *testing.T) {
	e := newEnv(t, xds.Config{})
	e.register(t, "ORDERS", "a", xdstest.Backend(t, "a"), nil)
	xdstest.EventuallyReaches(t, e.conn(t, "xds:///Orders"), "a")
	xdstest.EventuallyReaches(t, e.conn(t, "xds:///ORDERS"), "a")

	later := e.conn(t, "xds:///later")
	start := time.Now()
	if name, err := xdstest.Who(later, 5*time.Second); status.Code(err) != codes.Unavailable {
		t.Fatalf("an app nobody registered: %q %v, want UNAVAILABLE", name, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("an app nobody registered failed after %v", d)
	}
	e.register(t, "LATER", "l", xdstest.Backend(t, "l"), nil)
	xdstest.EventuallyReaches(t, later, "l")
}

// A Config the server cannot honour is refused by name.
func TestConfigRefusesUnknownPolicy(t *testing.T) {
	_, err := xds.New(registry.New(registry.Config{}), xds.Config{Policy: "fastest"})
	if err == nil || !strings.Contains(err.Error(), `Policy: "fastest"`) {
		t.Fatalf("got %v", err)
	}
}
