package xds_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/xds"
)

// deltaStream is a raw incremental ADS stream to e's server.
type deltaStream struct {
	t     *testing.T
	st    discoverygrpc.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	close context.CancelFunc // ends the stream
}

func openDelta(t *testing.T, e *env) *deltaStream {
	t.Helper()
	conn, err := grpc.NewClient(e.xds.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := discoverygrpc.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &deltaStream{t: t, st: st, close: cancel}
}

func (d *deltaStream) subscribe(typeURL string, names ...string) {
	d.t.Helper()
	if err := d.st.Send(&discoverygrpc.DeltaDiscoveryRequest{Node: &corev3.Node{Id: d.t.Name()}, TypeUrl: typeURL, ResourceNamesSubscribe: names}); err != nil {
		d.t.Fatal(err)
	}
}

// recv reads the next response, ACKs it, and checks every resource in it
// with the constraints Envoy applies when it loads one (ValidateAll).
func (d *deltaStream) recv() *discoverygrpc.DeltaDiscoveryResponse {
	d.t.Helper()
	got := make(chan *discoverygrpc.DeltaDiscoveryResponse, 1)
	errs := make(chan error, 1)
	go func() {
		r, err := d.st.Recv()
		if err != nil {
			errs <- err
			return
		}
		got <- r
	}()
	var r *discoverygrpc.DeltaDiscoveryResponse
	select {
	case r = <-got:
	case err := <-errs:
		d.t.Fatal(err)
	case <-time.After(10 * time.Second):
		d.t.Fatal("no response within 10s")
	}
	for _, res := range r.Resources {
		m, err := res.Resource.UnmarshalNew()
		if err != nil {
			d.t.Fatal(err)
		}
		if err := m.(interface{ ValidateAll() error }).ValidateAll(); err != nil {
			d.t.Errorf("%s %s: %v", r.TypeUrl, res.Name, err)
		}
	}
	if err := d.st.Send(&discoverygrpc.DeltaDiscoveryRequest{TypeUrl: r.TypeUrl, ResponseNonce: r.Nonce}); err != nil {
		d.t.Fatal(err)
	}
	return r
}

// recvAll reads responses of typeURL until they have carried every name
// of want, and fails on another type or name.
func (d *deltaStream) recvAll(typeURL string, want ...string) {
	d.t.Helper()
	got := map[string]bool{}
	for len(got) < len(want) {
		r := d.recv()
		for _, n := range names(r) {
			if r.TypeUrl != typeURL || !slices.Contains(want, n) {
				d.t.Fatalf("got %s %s, want %s %v", r.TypeUrl, n, typeURL, want)
			}
			got[n] = true
		}
	}
}

func names(r *discoverygrpc.DeltaDiscoveryResponse) []string {
	var n []string
	for _, res := range r.Resources {
		n = append(n, res.Name)
	}
	slices.Sort(n)
	return n
}

// Over incremental xDS, a change to one app sends that app's endpoints
// and nothing else, and every resource sent passes Envoy's validation.
func TestDeltaSendsOnlyTheChangedApp(t *testing.T) {
	e := newEnv(t, xds.Config{})
	e.register(t, "ORDERS", "o1", 9001, map[string]string{"zone": "z1", "version": "v1"})
	e.register(t, "USERS", "u1", 9002, nil)

	d := openDelta(t, e)
	d.subscribe(resourcev3.ListenerType, "orders")
	if r := d.recv(); !slices.Equal(names(r), []string{"orders"}) {
		t.Fatalf("listeners: %v", names(r))
	}
	// The registrations reach the server's loop after it started: the
	// resources may come in one response or in two.
	d.subscribe(resourcev3.ClusterType, "ORDERS", "USERS")
	d.recvAll(resourcev3.ClusterType, "ORDERS", "USERS")
	d.subscribe(resourcev3.EndpointType, "ORDERS", "USERS")
	d.recvAll(resourcev3.EndpointType, "ORDERS", "USERS")

	if st := e.xds.Stats(); st.Clients != 1 || pushes(st) != 0 || st.ResourcesSent["endpoints"] != 2 {
		t.Fatalf("after the answers: %+v, want 1 client, no push, 2 endpoints sent", st)
	}

	e.register(t, "USERS", "u2", 9003, nil)
	r := d.recv()
	if st := e.xds.Stats(); pushes(st) != 1 || st.ResourcesSent["endpoints"] != 3 {
		t.Errorf("after a push: %+v, want 1 push, 3 endpoints sent", st)
	}
	if r.TypeUrl != resourcev3.EndpointType || !slices.Equal(names(r), []string{"USERS"}) {
		t.Fatalf("after a USERS registration: %s %v, want endpoints [USERS]", r.TypeUrl, names(r))
	}
	var cla endpointv3.ClusterLoadAssignment
	if err := r.Resources[0].Resource.UnmarshalTo(&cla); err != nil {
		t.Fatal(err)
	}
	if n := len(cla.Endpoints[0].LbEndpoints); n != 2 {
		t.Fatalf("USERS has %d endpoints, want 2", n)
	}

	e.send(t, http.MethodDelete, "/apps/USERS/u1", http.StatusOK)
	e.send(t, http.MethodDelete, "/apps/USERS/u2", http.StatusOK)
	// The app's last instance gone, its cluster and endpoints are removed.
	removed := map[string][]string{}
	for len(removed) < 2 {
		r := d.recv()
		if len(r.RemovedResources) > 0 {
			removed[r.TypeUrl] = r.RemovedResources
		}
	}
	for _, typ := range []string{resourcev3.ClusterType, resourcev3.EndpointType} {
		if !slices.Equal(removed[typ], []string{"USERS"}) {
			t.Errorf("removed %s: %v, want [USERS]", typ, removed[typ])
		}
	}

	d.close()
	testkit.Eventually(t, 5*time.Second, "the closed stream to leave the client count", func() bool { return e.xds.Stats().Clients == 0 })
}

// pushes counts the pushes in st's latency histogram.
func pushes(st xds.Stats) uint64 {
	var n uint64
	for _, c := range st.PushLatency {
		n += c
	}
	return n
}

// The listener names made for clients are bounded in number and length:
// past the bound a name is answered absent, and the names made before it
// are still served.
func TestListenerNamesBounded(t *testing.T) {
	e := newEnv(t, xds.Config{MaxListenerNames: 2})
	d := openDelta(t, e)
	long := strings.Repeat("a", 257)
	d.subscribe(resourcev3.ListenerType, "orders", long)
	if r := d.recv(); !slices.Equal(names(r), []string{"orders"}) {
		t.Fatalf("listeners %v, want [orders]: a 257-byte name is absent", names(r))
	}
	d.subscribe(resourcev3.ListenerType, "users", "payments")
	if r := d.recv(); len(r.Resources) != 1 {
		t.Fatalf("listeners %v, want one of users and payments: the bound is 2", names(r))
	}
	d2 := openDelta(t, e)
	d2.subscribe(resourcev3.ListenerType, "orders", "other")
	if r := d2.recv(); !slices.Equal(names(r), []string{"orders"}) {
		t.Fatalf("another client's listeners %v, want [orders]: made before the bound, absent past it", names(r))
	}
}
