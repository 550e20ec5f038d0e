package xds_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/eurekagate/eurekagate/xds"
)

// Over state-of-the-world xDS too, a change to one app sends that app's
// endpoints only (endpoints are not a full-state type).
func TestSotWSendsOnlyTheChangedApp(t *testing.T) {
	e := newEnv(t, xds.Config{})
	e.register(t, "ORDERS", "o1", 9001, nil)
	e.register(t, "USERS", "u1", 9002, nil)

	conn, err := grpc.NewClient(e.xds.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := discoverygrpc.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := &discoverygrpc.DiscoveryRequest{Node: &corev3.Node{Id: t.Name()}, TypeUrl: resourcev3.EndpointType, ResourceNames: []string{"ORDERS", "USERS"}}
	// recv reads a response, ACKs it and returns the apps it carries.
	recv := func() []string {
		t.Helper()
		r, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		var apps []string
		for _, a := range r.Resources {
			var cla endpointv3.ClusterLoadAssignment
			if err := a.UnmarshalTo(&cla); err != nil {
				t.Fatal(err)
			}
			apps = append(apps, cla.ClusterName)
		}
		req.VersionInfo, req.ResponseNonce = r.VersionInfo, r.Nonce
		if err := st.Send(req); err != nil {
			t.Fatal(err)
		}
		slices.Sort(apps)
		return apps
	}
	if err := st.Send(req); err != nil {
		t.Fatal(err)
	}
	// Both apps, in one answer or two (the loop may build USERS after it).
	seen := map[string]bool{}
	for len(seen) < 2 {
		for _, a := range recv() {
			seen[a] = true
		}
	}
	e.register(t, "USERS", "u2", 9003, nil)
	if got := recv(); !slices.Equal(got, []string{"USERS"}) {
		t.Fatalf("after a USERS registration: %v, want [USERS]", got)
	}
}
