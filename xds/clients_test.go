package xds_test

import (
	"slices"
	"testing"
	"time"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/internal/xdstest"
	"github.com/eurekagate/eurekagate/xds"
)

// Clients lists the streams open now with their node id, the types they
// asked for and when they opened; a stream that ends leaves the list.
func TestClientsListsOpenStreams(t *testing.T) {
	e := newEnv(t, xds.Config{})
	e.register(t, "ORDERS", "a", xdstest.Backend(t, "a"), nil)
	before := time.Now()
	d := openDelta(t, e)
	d.subscribe(resourcev3.ClusterType, "ORDERS")
	d.recvAll(resourcev3.ClusterType, "ORDERS")
	d.subscribe(resourcev3.EndpointType, "ORDERS")
	d.recvAll(resourcev3.EndpointType, "ORDERS")
	xdstest.EventuallyReaches(t, xdstest.Conn(t, xdstest.Bootstrap(e.xds.Addr().String(), `{"type":"insecure"}`, "grpc-client-1"), "xds:///orders"), "a")

	got := e.xds.Clients()
	if len(got) != 2 {
		t.Fatalf("clients %+v, want the delta stream and grpc-go's", got)
	}
	delta, grpc := got[0], got[1]
	if delta.Node != t.Name() || !delta.Delta || !slices.Equal(delta.Types, []string{"cluster", "endpoints"}) || delta.Since.Before(before) || delta.Since.After(grpc.Since) {
		t.Errorf("the delta stream: %+v", delta)
	}
	if grpc.Node != "grpc-client-1" || grpc.Delta || !slices.Equal(grpc.Types, []string{"listener", "cluster", "endpoints"}) || grpc.Since.After(time.Now()) {
		t.Errorf("grpc-go's stream: %+v", grpc)
	}

	d.close()
	testkit.Eventually(t, 5*time.Second, "the closed stream gone from Clients", func() bool {
		c := e.xds.Clients()
		return len(c) == 1 && c[0].Node == "grpc-client-1"
	})
}
