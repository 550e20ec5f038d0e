// Package xdstest is what the xDS and gRPC resolver tests share: gRPC
// backends that answer their name (internal/xdsfixture's, stopped at the
// test's end), registered through Eureka's REST API, an xDS server on
// loopback, grpc-go's own xDS client bootstrapped to a server on
// loopback, and a poll for the backends its RPCs reach.
package xdstest

import (
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	grpcxds "google.golang.org/grpc/xds"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/registrytest"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/internal/xdsfixture"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/xds"
)

// Backend starts a gRPC server on loopback answering with name, stopped
// when the test ends, and returns its port.
func Backend(t testing.TB, name string) int {
	t.Helper()
	port, stop, err := xdsfixture.StartBackend(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return port
}

// Registry starts a Store served over Eureka's REST API on loopback until
// the test ends, and returns it with the API's base URL (.../eureka).
func Registry(t testing.TB) (*registry.Store, string) {
	t.Helper()
	store := registry.New(registry.Config{})
	store.Start()
	t.Cleanup(store.Stop)
	srv := registrytest.Start(t, store, httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	return store, strings.TrimSuffix(srv.URL(), "/")
}

// Serve starts an xDS server of src on loopback, stopped when the test
// ends.
func Serve(t testing.TB, src xds.Source, cfg xds.Config) *xds.Server {
	t.Helper()
	x, err := xds.New(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	x.Start(ln)
	t.Cleanup(x.Stop)
	return x
}

// Register registers app's instance id with the Eureka REST API at api
// (.../eureka), with grpcPort as its gRPC_port metadata beside md and an
// HTTP port of its own, and fails the test unless it is accepted.
func Register(t testing.TB, api, app, id string, grpcPort int, md map[string]string) {
	t.Helper()
	i := testkit.Inst(app, id)
	i.Metadata = map[string]string{eureka.DefaultGRPCPortKey: strconv.Itoa(grpcPort)}
	maps.Copy(i.Metadata, md)
	code, body := testkit.HTTPPost(t, api+"/apps/"+app, "application/json", string(eureka.AppendInstanceJSON(nil, i)))
	if code != http.StatusNoContent {
		t.Fatalf("register %s/%s: %d %s", app, id, code, body)
	}
}

// Bootstrap is grpc-go's bootstrap configuration for an xDS server at
// addr, reached with channelCreds (xdsfixture.Bootstrap).
var Bootstrap = xdsfixture.Bootstrap

// Who calls a backend once over conn and returns its name
// (xdsfixture.Who).
var Who = xdsfixture.Who

// Conn dials target (xds:///orders) through grpc-go's own xDS resolver
// with bootstrap; the connection closes when the test ends.
func Conn(t testing.TB, bootstrap []byte, target string) *grpc.ClientConn {
	t.Helper()
	builder, err := grpcxds.NewXDSResolverWithConfigForTesting(bootstrap)
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

// Count calls n times with the metadata pairs md (key, value, ...) and
// returns how many calls each backend answered (xdsfixture.Count).
var Count = xdsfixture.Count

// Reached calls n times and returns the backends that answered; a failed
// call counts as "error".
func Reached(conn *grpc.ClientConn, n int) map[string]bool {
	seen := map[string]bool{}
	for name := range Count(conn, n) {
		seen[name] = true
	}
	return seen
}

// EventuallyReaches polls until 12 calls in a row reach exactly the
// backends want.
func EventuallyReaches(t testing.TB, conn *grpc.ClientConn, want ...string) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, "RPCs reach "+strings.Join(want, " "), func() bool {
		return slices.Equal(slices.Sorted(maps.Keys(Reached(conn, 12))), slices.Sorted(slices.Values(want)))
	})
}
