package grpcresolver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/grpcresolver"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/internal/xdstest"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

// eurekaClient is a registry served over REST on loopback, its API's
// base URL, and a started discovery client reading it.
func eurekaClient(t *testing.T) (string, *discovery.Client) {
	t.Helper()
	_, api := xdstest.Registry(t)
	client, err := discovery.New(discovery.Config{ServiceURLs: []string{api + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	client.Start()
	testkit.StopOnCleanupChecked(t, 5*time.Second, client.Stop)
	return api, client
}

func dial(t *testing.T, b *grpcresolver.Builder, target string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithResolvers(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// eureka:///orders reaches ORDERS' UP instances on their gRPC port, in
// whatever case it is written, and follows the registry as the discovery
// client learns it: out of service, cancelled, newly registered.
func TestResolverFollowsTheRegistry(t *testing.T) {
	api, client := eurekaClient(t)
	xdstest.Register(t, api, "ORDERS", "a", xdstest.Backend(t, "a"), nil)
	xdstest.Register(t, api, "ORDERS", "b", xdstest.Backend(t, "b"), nil)

	for _, policy := range []string{grpcresolver.PolicyRoundRobin, grpcresolver.PolicyLeastRequest} {
		xdstest.EventuallyReaches(t, dial(t, &grpcresolver.Builder{Client: client, Policy: policy}, "eureka:///Orders"), "a", "b")
	}
	conn := dial(t, &grpcresolver.Builder{Client: client}, "eureka:///orders")
	xdstest.EventuallyReaches(t, conn, "a", "b")

	send := func(method, path string) {
		t.Helper()
		req, err := http.NewRequest(method, api+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp, body := testkit.Do(t, http.DefaultClient, req); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, body)
		}
	}
	send(http.MethodPut, "/apps/ORDERS/b/status?value=OUT_OF_SERVICE")
	xdstest.EventuallyReaches(t, conn, "a")
	send(http.MethodDelete, "/apps/ORDERS/a")
	xdstest.EventuallyReaches(t, conn, "error")
	xdstest.Register(t, api, "ORDERS", "c", xdstest.Backend(t, "c"), nil)
	xdstest.EventuallyReaches(t, conn, "c")
}

// A policy the resolver does not know is refused by name when dialled.
func TestResolverRefusesUnknownPolicy(t *testing.T) {
	_, client := eurekaClient(t)
	conn := dial(t, &grpcresolver.Builder{Client: client, Policy: "fastest"}, "eureka:///orders")
	if _, err := xdstest.Who(conn, 2*time.Second); err == nil || !strings.Contains(err.Error(), `Policy: "fastest"`) {
		t.Fatalf("got %v, want the policy refused", err)
	}
}
