package xds_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
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

// An instance registered by our Go discovery client, with its gRPC port
// in its metadata as grpc-spring-boot-starter writes it, gets RPCs; the
// status DOWN it reports and its stop (its cancel) take them away.
func TestGRPCGoXDSClientReachesOurGoClientsInstance(t *testing.T) {
	e := newEnv(t, xds.Config{})
	e.register(t, "ORDERS", "a", xdstest.Backend(t, "a"), nil)
	registrant, err := discovery.New(discovery.Config{
		ServiceURLs:  []string{e.api + "/"},
		DisableFetch: true,
		Instance: &discovery.InstanceConfig{AppName: "orders", InstanceID: "g", IPAddr: "127.0.0.1", Port: 1,
			Metadata: map[string]string{xds.DefaultGRPCPortKey: strconv.Itoa(xdstest.Backend(t, "g"))}},
	})
	if err != nil {
		t.Fatal(err)
	}
	registrant.Start()
	conn := e.conn(t, "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "a", "g")

	if err := registrant.SetStatus(eureka.StatusDown); err != nil {
		t.Fatal(err)
	}
	xdstest.EventuallyReaches(t, conn, "a")
	if err := registrant.SetStatus(eureka.StatusUp); err != nil {
		t.Fatal(err)
	}
	xdstest.EventuallyReaches(t, conn, "a", "g")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := registrant.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	xdstest.EventuallyReaches(t, conn, "a")
}

// An instance whose lease expires is evicted, and its RPCs stop; the
// lease that was renewed keeps its instance.
func TestGRPCGoXDSClientEvictionStopsRPCs(t *testing.T) {
	clock := testkit.NewFakeClock()
	store := registry.New(registry.Config{Clock: clock, DisableSelfPreservation: true})
	x := xdstest.Serve(t, store, xds.Config{})
	for _, id := range []string{"kept", "expired"} {
		i := testkit.Inst("ORDERS", id)
		i.Metadata = map[string]string{xds.DefaultGRPCPortKey: strconv.Itoa(xdstest.Backend(t, id))}
		testkit.MustRegister(t, store, i, false)
	}
	conn := xdstest.Conn(t, xdstest.Bootstrap(x.Addr().String(), `{"type":"insecure"}`, t.Name()), "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "kept", "expired")

	// 90 s leases: at 100 s, "expired" has been silent for 100 s and
	// "kept" for 50.
	clock.Advance(50 * time.Second)
	store.Renew("ORDERS", "kept", registry.RenewRequest{})
	clock.Advance(50 * time.Second)
	if ev := store.Evict(); len(ev) != 1 || ev[0] != "expired" {
		t.Fatalf("evicted %v, want the expired lease", ev)
	}
	xdstest.EventuallyReaches(t, conn, "kept")
}
