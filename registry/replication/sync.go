package replication

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/eurekahttp"
)

// SyncFrom fills the Store from the first peer that answers a full fetch,
// registering every instance as a replication (so nothing is sent back),
// and sets the expected number of renewing clients from the count, as
// Eureka's syncUp and openForTraffic do. Run it before serving reads. With
// no peer answering, the node starts empty and logs it. It gives up when
// ctx ends, so it fits in a start-up deadline.
func (p *Peers) SyncFrom(ctx context.Context) int {
	for _, pe := range p.peers {
		timeout := p.cfg.Timeout
		if deadline, ok := ctx.Deadline(); ok {
			timeout = min(timeout, time.Until(deadline)/2)
		}
		if ctx.Err() != nil || timeout <= 0 {
			break
		}
		apps, err := p.fetchAll(pe, timeout)
		if err != nil {
			p.log.Warn("start-up sync: peer did not answer", zap.String("peer", pe.url.Base), zap.Error(err))
			continue
		}
		count := 0
		for _, a := range apps.Applications {
			for _, i := range a.Instances {
				if i.App == "" {
					i.App = a.Name
				}
				if err := p.store.Adopt(i); err == nil {
					count++
				}
			}
		}
		p.store.SetExpectedRenewingClients(max(count, 1))
		p.log.Info("start-up sync done", zap.String("peer", pe.url.Base), zap.Int("instances", count))
		return count
	}
	if len(p.peers) > 0 {
		p.log.Warn("start-up sync: no peer answered; starting with an empty registry", zap.Int("peers", len(p.peers)))
	}
	return 0
}

func (p *Peers) fetchAll(pe *peer, timeout time.Duration) (*eureka.Applications, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := p.client.Do(ctx, pe.url, eurekahttp.Request{Path: "apps/"})
	if err != nil {
		return nil, err
	}
	if resp.Status != http.StatusOK {
		return nil, errors.New("full fetch answered " + http.StatusText(resp.Status))
	}
	return eureka.DecodeApplicationsJSON(resp.Body)
}
