package replication

import (
	"net/http"
	"strings"

	"go.uber.org/zap"
)

// itemResult repairs what a peer reported: a heartbeat it did not know
// gets a registration, and a newer copy it holds (409) is adopted here.
func (p *Peers) itemResult(pe *peer, it Item, r Result) {
	if it.Action != ActionHeartbeat {
		return
	}
	switch {
	case r.StatusCode == http.StatusNotFound:
		if inst, ok := p.store.Get(strings.ToUpper(it.AppName), it.ID); ok {
			pe.enqueue(Item{Action: ActionRegister, AppName: inst.App, ID: inst.ID(),
				LastDirtyTimestamp: inst.LastDirtyTimestamp, Status: inst.Status.String(), Instance: inst}, p.cfg.Clock.Now(), p.cfg)
		}
	case r.Instance != nil:
		if err := p.store.Adopt(r.Instance); err != nil {
			p.log.Warn("adopting a peer's newer instance failed", zap.String("peer", pe.url.Base), zap.Error(err))
		}
	}
}
