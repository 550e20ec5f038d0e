package xds

import (
	"context"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	xdsserver "github.com/envoyproxy/go-control-plane/pkg/server/v3"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/eurekagate/eurekagate/traffic"
)

// Stats is what a Server has done, cumulative but for Clients; /metrics
// exports it.
type Stats struct {
	// Clients is the xDS streams open now (one per ADS client).
	Clients int64
	// ResourcesSent counts the resources sent, by type: "listener",
	// "cluster", "endpoints", "route".
	ResourcesSent map[string]uint64
	// PushLatency counts the pushes of an app's endpoints by the time
	// from the app's last change in the source to the send:
	// PushLatency[i] those that took at most traffic.Buckets[i] (and more
	// than the bucket before), the last one those over 10 s. Answers to a
	// client's request are not pushes and are not counted.
	PushLatency [len(traffic.Buckets) + 1]uint64
	// PushLatencySum is the pushes' latencies added up.
	PushLatencySum time.Duration
}

var typeNames = map[string]string{listenerType: "listener", clusterType: "cluster", endpointType: "endpoints", routeType: "route"}

// stats counts for Stats from go-control-plane's callbacks.
type stats struct {
	clients atomic.Int64
	sent    map[string]*atomic.Uint64 // by type URL, fixed

	mu sync.Mutex
	// changedAt is each app's last change in the source; requested, each
	// stream's last request for endpoints that asked for something new,
	// so that an answer to it is not taken for a push; names, the names a
	// state-of-the-world stream asked for last (its ACKs repeat them).
	changedAt map[string]time.Time
	requested map[streamKey]time.Time
	names     map[streamKey]string
	streams   map[streamKey]*stream // the streams open now (Clients)
	latency   [len(traffic.Buckets) + 1]uint64
	sum       time.Duration
}

func newStats() *stats {
	st := &stats{sent: map[string]*atomic.Uint64{}, changedAt: map[string]time.Time{}, requested: map[streamKey]time.Time{}, names: map[streamKey]string{}, streams: map[streamKey]*stream{}}
	for t := range typeNames {
		st.sent[t] = new(atomic.Uint64)
	}
	return st
}

// changed records the apps' last change times.
func (st *stats) changed(apps map[string]time.Time) {
	st.mu.Lock()
	for app, at := range apps {
		st.changedAt[app] = at
	}
	st.mu.Unlock()
}

func (st *stats) gone(app string) {
	st.mu.Lock()
	delete(st.changedAt, app)
	st.mu.Unlock()
}

// request records a request for endpoints that asks for something new:
// an answer to it is not a push. An ACK asks for nothing new.
func (st *stats) request(stream streamKey, typeURL string, asks bool) {
	if typeURL == endpointType && asks {
		st.mu.Lock()
		st.requested[stream] = time.Now()
		st.mu.Unlock()
	}
}

// response records a response of typeURL on stream, with the names of
// the endpoints it carries.
func (st *stats) response(stream streamKey, typeURL string, apps []string) {
	if c := st.sent[typeURL]; c != nil {
		c.Add(uint64(len(apps)))
	}
	if typeURL != endpointType {
		return
	}
	now := time.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	asked := st.requested[stream]
	for _, app := range apps {
		at, ok := st.changedAt[app]
		if !ok || !at.After(asked) {
			continue
		}
		d := now.Sub(at)
		st.latency[sort.SearchFloat64s(traffic.Buckets[:], d.Seconds())]++
		st.sum += d
	}
}

func (st *stats) closed(stream streamKey) {
	st.clients.Add(-1)
	st.mu.Lock()
	delete(st.requested, stream)
	delete(st.names, stream)
	delete(st.streams, stream)
	st.mu.Unlock()
}

// namesChanged reports whether a state-of-the-world request for endpoints
// names other resources than the stream's last one.
func (st *stats) namesChanged(stream streamKey, r *discoverygrpc.DiscoveryRequest) bool {
	if r.GetTypeUrl() != endpointType {
		return false
	}
	names := strings.Join(r.GetResourceNames(), "\x00")
	st.mu.Lock()
	defer st.mu.Unlock()
	changed := st.names[stream] != names
	st.names[stream] = names
	return changed
}

// callbacks feeds st from the ADS server, both variants.
func (st *stats) callbacks() xdsserver.Callbacks {
	return xdsserver.CallbackFuncs{
		StreamOpenFunc: func(_ context.Context, id int64, _ string) error {
			st.opened(streamKey{id, false})
			return nil
		},
		DeltaStreamOpenFunc: func(_ context.Context, id int64, _ string) error {
			st.opened(streamKey{id, true})
			return nil
		},
		StreamClosedFunc:      func(id int64, _ *corev3.Node) { st.closed(streamKey{id, false}) },
		DeltaStreamClosedFunc: func(id int64, _ *corev3.Node) { st.closed(streamKey{id, true}) },
		StreamRequestFunc: func(id int64, r *discoverygrpc.DiscoveryRequest) error {
			k := streamKey{id, false}
			st.asked(k, r.GetNode(), r.GetTypeUrl())
			// namesChanged runs on every request, the first too, so that
			// the first request's ACK is not taken for a new ask.
			changed := st.namesChanged(k, r)
			st.request(k, r.GetTypeUrl(), r.GetResponseNonce() == "" || changed)
			return nil
		},
		StreamDeltaRequestFunc: func(id int64, r *discoverygrpc.DeltaDiscoveryRequest) error {
			k := streamKey{id, true}
			st.asked(k, r.GetNode(), r.GetTypeUrl())
			st.request(k, r.GetTypeUrl(), r.GetResponseNonce() == "" || len(r.GetResourceNamesSubscribe()) > 0)
			return nil
		},
		StreamResponseFunc: func(_ context.Context, id int64, _ *discoverygrpc.DiscoveryRequest, r *discoverygrpc.DiscoveryResponse) {
			apps := make([]string, 0, len(r.GetResources()))
			for _, res := range r.GetResources() {
				apps = append(apps, clusterName(res.GetValue()))
			}
			st.response(streamKey{id, false}, r.GetTypeUrl(), apps)
		},
		StreamDeltaResponseFunc: func(id int64, _ *discoverygrpc.DeltaDiscoveryRequest, r *discoverygrpc.DeltaDiscoveryResponse) {
			apps := make([]string, 0, len(r.GetResources()))
			for _, res := range r.GetResources() {
				apps = append(apps, res.GetName())
			}
			st.response(streamKey{id, true}, r.GetTypeUrl(), apps)
		},
	}
}

// Stats returns what the server has done so far.
func (s *Server) Stats() Stats {
	st := s.stats
	out := Stats{Clients: st.clients.Load(), ResourcesSent: map[string]uint64{}}
	for t, c := range st.sent {
		out.ResourcesSent[typeNames[t]] = c.Load()
	}
	st.mu.Lock()
	out.PushLatency, out.PushLatencySum = st.latency, st.sum
	st.mu.Unlock()
	return out
}

// clusterName reads a ClusterLoadAssignment's cluster_name (field 1) from
// its encoding without decoding the rest; "" for another resource.
func clusterName(b []byte) string {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return ""
			}
			return string(v)
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return ""
		}
		b = b[n:]
	}
	return ""
}
