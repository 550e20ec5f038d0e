package dashboard

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// Without an xDS server, api/xds says so and lists nobody (the page
// hides the block).
func TestXDSNone(t *testing.T) {
	h, _, _ := newDashboard(t, Config{})
	var v XDSView
	if code := get(t, h, context.Background(), "/api/xds", &v); code != 200 || v.Enabled || v.Clients == nil || len(v.Clients) != 0 {
		t.Fatalf("api/xds without xDS: %d %+v", code, v)
	}
}

// api/xds lists the clients Config.XDS returns, in its order, with their
// node id, types, stream variant and the time they connected.
func TestXDSClientsView(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clients := []XDSClient{
		{Node: "edge-1", Types: []string{"cluster", "endpoints", "route"}, Since: since, Delta: true},
		{Node: "", Since: since.Add(time.Minute)},
	}
	h, _, _ := newDashboard(t, Config{XDS: func() []XDSClient { return clients }})
	var v XDSView
	if code := get(t, h, context.Background(), "/api/xds", &v); code != 200 || !v.Enabled || v.Now.IsZero() {
		t.Fatalf("api/xds: %d %+v", code, v)
	}
	want := []XDSClientView{
		{Node: "edge-1", Types: []string{"cluster", "endpoints", "route"}, Since: since, Variant: "delta"},
		{Node: "", Types: []string{}, Since: since.Add(time.Minute), Variant: "sotw"},
	}
	if !reflect.DeepEqual(v.Clients, want) {
		t.Errorf("api/xds clients\n got %+v\nwant %+v", v.Clients, want)
	}
}
