package xds

import (
	"context"
	"testing"
	"time"

	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// go-control-plane numbers state-of-the-world and incremental streams
// apart, so both have a stream 1: a state-of-the-world stream 1 that
// closes leaves the incremental stream 1's request in place, and the
// answer to that request is not counted as a push.
func TestStatsKeepStreamsOfBothVariantsApart(t *testing.T) {
	st := newStats()
	cb := st.callbacks()
	ctx := context.Background()
	if err := cb.OnDeltaStreamOpen(ctx, 1, endpointType); err != nil {
		t.Fatal(err)
	}
	st.changed(map[string]time.Time{"ORDERS": time.Now().Add(-time.Second)})
	req := &discoverygrpc.DeltaDiscoveryRequest{TypeUrl: endpointType, ResourceNamesSubscribe: []string{"ORDERS"}}
	if err := cb.OnStreamDeltaRequest(1, req); err != nil {
		t.Fatal(err)
	}
	if err := cb.OnStreamOpen(ctx, 1, ""); err != nil {
		t.Fatal(err)
	}
	cb.OnStreamClosed(1, nil)
	cb.OnStreamDeltaResponse(1, req, &discoverygrpc.DeltaDiscoveryResponse{TypeUrl: endpointType,
		Resources: []*discoverygrpc.Resource{{Name: "ORDERS"}}})
	var pushes uint64
	for _, n := range st.latency {
		pushes += n
	}
	if pushes != 0 {
		t.Errorf("the answer to the incremental stream's request counted as %d push(es)", pushes)
	}
	if n := st.clients.Load(); n != 1 {
		t.Errorf("%d clients, want the incremental stream", n)
	}
}

// A state-of-the-world client's ACK of its first answer may reach the
// server after the next change (it did on a loaded CI machine): the ACK
// repeats the first request's names, asks for nothing new, and the push
// of that change counts.
func TestStatsLateACKOfTheFirstAnswer(t *testing.T) {
	st := newStats()
	cb := st.callbacks()
	if err := cb.OnStreamOpen(context.Background(), 1, ""); err != nil {
		t.Fatal(err)
	}
	first := &discoverygrpc.DiscoveryRequest{TypeUrl: endpointType, ResourceNames: []string{"orders"}}
	if err := cb.OnStreamRequest(1, first); err != nil {
		t.Fatal(err)
	}
	answer := &discoverygrpc.DiscoveryResponse{TypeUrl: endpointType}
	cb.OnStreamResponse(context.Background(), 1, first, answer)
	st.requested[streamKey{1, false}] = time.Now().Add(-time.Second) // the first request, a while ago
	st.changed(map[string]time.Time{"orders": time.Now().Add(-time.Millisecond)})
	ack := &discoverygrpc.DiscoveryRequest{TypeUrl: endpointType, ResourceNames: []string{"orders"}, ResponseNonce: "1", VersionInfo: "1"}
	if err := cb.OnStreamRequest(1, ack); err != nil {
		t.Fatal(err)
	}
	st.response(streamKey{1, false}, endpointType, []string{"orders"})
	var pushes uint64
	for _, n := range st.latency {
		pushes += n
	}
	if pushes != 1 {
		t.Errorf("the push after a late ACK counted %d times, want 1", pushes)
	}
}
