package xds

import (
	"cmp"
	"slices"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// Client is an xDS stream open now: one per Envoy or gRPC client.
type Client struct {
	// Node is the node id the client's bootstrap gives (its first request
	// carries it), cut to maxNodeID bytes; "" until it has asked.
	Node string
	// Types are the resource types it has asked for, in the order
	// listener, cluster, endpoints, route.
	Types []string
	// Since is when its stream opened.
	Since time.Time
	// Delta reports an incremental stream, else state of the world.
	Delta bool
}

// maxNodeID bounds the bytes of a node id kept: the client chooses it.
const maxNodeID = 256

// typeOrder is Client.Types' order.
var typeOrder = []string{listenerType, clusterType, endpointType, routeType}

// streamKey identifies a stream: go-control-plane numbers the
// state-of-the-world streams and the incremental ones apart.
type streamKey struct {
	id    int64
	delta bool
}

// stream is what stats keeps of an open stream.
type stream struct {
	node  string
	types uint8 // bits of typeOrder's indices
	since time.Time
	delta bool
}

func (st *stats) opened(k streamKey) {
	st.clients.Add(1)
	st.mu.Lock()
	st.streams[k] = &stream{since: time.Now(), delta: k.delta}
	st.mu.Unlock()
}

// asked records a stream's node and the type it asked for.
func (st *stats) asked(k streamKey, node *corev3.Node, typeURL string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.streams[k]
	if s == nil {
		return
	}
	if id := node.GetId(); id != "" && s.node == "" {
		s.node = id[:min(len(id), maxNodeID)]
	}
	if i := slices.Index(typeOrder, typeURL); i >= 0 {
		s.types |= 1 << i
	}
}

// Clients returns the xDS streams open now, the oldest first.
func (s *Server) Clients() []Client {
	st := s.stats
	st.mu.Lock()
	out := make([]Client, 0, len(st.streams))
	for _, c := range st.streams {
		cl := Client{Node: c.node, Since: c.since, Delta: c.delta}
		for i, t := range typeOrder {
			if c.types&(1<<i) != 0 {
				cl.Types = append(cl.Types, typeNames[t])
			}
		}
		out = append(out, cl)
	}
	st.mu.Unlock()
	slices.SortFunc(out, func(a, b Client) int {
		return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.Node, b.Node))
	})
	return out
}
