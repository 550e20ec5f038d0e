package replication

import (
	"context"
	"strconv"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/internal/eurekahttp"
)

// nodeHeader carries a node's identity on every answer of our servers
// (httpapi.HeaderNode): its Store's epoch in hex.
const nodeHeader = "Eurekagate-Node"

// syncingHeader is "true" on the 503 of a node whose own start-up sync
// is not done (httpapi.HeaderSyncing).
const syncingHeader = "Eurekagate-Syncing"

// A peer URL may name this very node under any name or address: its host
// name, an interface address, a load-balancer name, loopback. So a node
// recognises itself by asking: our servers send their identity with every
// answer, and a peer whose identity is this node's own is dropped. Peers
// are asked during the start-up sync and, for those not identified then
// (not yet listening), before their first batch. Java peers send no
// identity and are never taken for this node.

// identified records what an answer says of who pe is, and reports whether
// pe is this node.
func (p *Peers) identified(pe *peer, resp eurekahttp.Response) bool {
	pe.identified.Store(true)
	if resp.Header.Get(nodeHeader) == strconv.FormatUint(p.store.Epoch(), 16) {
		if !pe.self.Swap(true) {
			p.log.Info("a peer URL is this node itself; not replicating to it", zap.String("peer", pe.url.Base))
		}
		return true
	}
	return false
}

// identify asks pe who it is, if no answer has told yet. It reports
// whether pe is this node, and the error of a peer that did not answer.
func (p *Peers) identify(pe *peer) (bool, error) {
	if pe.identified.Load() {
		return pe.self.Load(), nil
	}
	ctx, cancel := context.WithTimeout(pe.ctx, p.cfg.Timeout)
	defer cancel()
	resp, err := p.client.Do(ctx, pe.url, eurekahttp.Request{Path: "apps/?apps="})
	if err != nil {
		return false, err
	}
	return p.identified(pe, resp), nil
}
