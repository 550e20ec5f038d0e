package dashboard

import "time"

// XDSClient is a client of the node's xDS server (Config.XDS): an Envoy
// or a gRPC client reading the registry over a stream.
type XDSClient struct {
	// Node is the node id of its bootstrap, "" before its first request.
	Node string
	// Types are the resource types it asked for: listener, cluster,
	// endpoints, route.
	Types []string
	// Since is when its stream opened.
	Since time.Time
	// Delta reports an incremental stream, else state of the world.
	Delta bool
}

// XDSClientsOf adapts a list of clients of XDSClient's shape (an
// xds.Server's Clients) to Config.XDS, so that the dashboard does not
// link the xDS server.
func XDSClientsOf[C ~struct {
	Node  string
	Types []string
	Since time.Time
	Delta bool
}](clients func() []C) func() []XDSClient {
	return func() []XDSClient {
		cs := clients()
		out := make([]XDSClient, len(cs))
		for i, c := range cs {
			out[i] = XDSClient(c)
		}
		return out
	}
}

// XDSView is api/xds: the xDS clients connected now, the oldest first.
type XDSView struct {
	// Enabled is false when the node serves no xDS (no Config.XDS): the
	// page shows no block.
	Enabled bool `json:"enabled"`
	// Now is the server's time, which the page measures ages from.
	Now     time.Time       `json:"now"`
	Clients []XDSClientView `json:"clients"`
}

// XDSClientView is one client's row.
type XDSClientView struct {
	Node  string    `json:"node"`
	Types []string  `json:"types"`
	Since time.Time `json:"since"`
	// Variant is "delta" (incremental) or "sotw" (state of the world).
	Variant string `json:"variant"`
}

// xdsView serves api/xds.
func (h *Handler) xdsView() XDSView {
	v := XDSView{Now: time.Now(), Clients: []XDSClientView{}}
	if h.cfg.XDS == nil {
		return v
	}
	v.Enabled = true
	for _, c := range h.cfg.XDS() {
		row := XDSClientView{Node: c.Node, Types: c.Types, Since: c.Since, Variant: "sotw"}
		if c.Delta {
			row.Variant = "delta"
		}
		if row.Types == nil {
			row.Types = []string{}
		}
		v.Clients = append(v.Clients, row)
	}
	return v
}
