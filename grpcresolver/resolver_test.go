package grpcresolver_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/serviceconfig"

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

// countingConn is a resolver.ClientConn that counts the states it is
// sent and keeps the last.
type countingConn struct {
	resolver.ClientConn
	mu    sync.Mutex
	n     int
	state resolver.State
}

func (c *countingConn) UpdateState(s resolver.State) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.state = s
	return nil
}

func (c *countingConn) ParseServiceConfig(string) *serviceconfig.ParseResult {
	return &serviceconfig.ParseResult{}
}

func (c *countingConn) sent() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n, len(c.state.Endpoints)
}

// An app with no instance is sent its empty state once, not again at
// each change of the registry or each ResolveNow; its first instance is
// sent.
func TestResolverSendsAnEmptyStateOnce(t *testing.T) {
	api, client := eurekaClient(t)
	cc := &countingConn{}
	target := resolver.Target{URL: url.URL{Scheme: grpcresolver.Scheme, Path: "/orders"}}
	r, err := (&grpcresolver.Builder{Client: client}).Build(target, cc, resolver.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n, eps := cc.sent(); n != 1 || eps != 0 {
		t.Fatalf("after Build: %d states, %d endpoints; want the empty state once", n, eps)
	}
	xdstest.Register(t, api, "OTHER", "x", xdstest.Backend(t, "x"), nil)
	testkit.Eventually(t, 10*time.Second, "the client sees OTHER", func() bool { return len(client.Instances("OTHER")) == 1 })
	r.ResolveNow(resolver.ResolveNowOptions{})
	r.ResolveNow(resolver.ResolveNowOptions{})
	if n, _ := cc.sent(); n != 1 {
		t.Errorf("%d states sent while ORDERS has no instance, want 1", n)
	}
	xdstest.Register(t, api, "ORDERS", "a", xdstest.Backend(t, "a"), nil)
	testkit.Eventually(t, 10*time.Second, "ORDERS' instance sent", func() bool {
		n, eps := cc.sent()
		return n >= 2 && eps == 1
	})
}
