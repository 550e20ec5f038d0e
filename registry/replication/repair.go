package replication

import (
	"net/http"
	"strings"

	"go.uber.org/zap"
)

// itemResult repairs what a peer reported:
//   - 404 to a heartbeat: the peer does not know the instance, so it gets a
//     registration;
//   - 409 to a heartbeat, with the peer's newer copy: the copy is adopted
//     here (Eureka adopts only on a non-2xx answer);
//   - 410 to a heartbeat or a registration: the peer saw the instance
//     cancelled after this node's copy was made (this node missed the
//     cancel, paused or cut off), so this node drops its copy too, as a
//     replicated cancel: nothing cancelled comes back.
func (p *Peers) itemResult(pe *peer, it Item, r Result) {
	app := strings.ToUpper(it.AppName)
	switch {
	case r.StatusCode == http.StatusGone && (it.Action == ActionHeartbeat || it.Action == ActionRegister):
		if p.store.Cancel(app, it.ID, true) {
			p.log.Info("dropped an instance a peer saw cancelled", zap.String("peer", pe.url.Base),
				zap.String("app", app), zap.String("id", it.ID))
		}
	case it.Action != ActionHeartbeat:
	case r.StatusCode == http.StatusNotFound:
		if inst, ok := p.store.Get(app, it.ID); ok {
			pe.enqueue(Item{Action: ActionRegister, AppName: inst.App, ID: inst.ID(),
				LastDirtyTimestamp: inst.LastDirtyTimestamp, Status: inst.Status.String(), Instance: inst}, p.cfg.Clock.Now(), p.cfg)
		}
	case r.StatusCode == http.StatusConflict && r.Instance != nil:
		if err := p.store.Adopt(r.Instance); err != nil {
			p.log.Warn("adopting a peer's newer instance failed", zap.String("peer", pe.url.Base), zap.Error(err))
		}
	}
}
