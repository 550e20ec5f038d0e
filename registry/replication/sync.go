package replication

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/eurekahttp"
)

// SyncFrom fills the Store at start-up, as Eureka's syncUp and
// openForTraffic do: it asks every peer for its registry at once and takes
// the one of the first peer that answers with instances, registering each
// as a replication (so nothing is sent back) and setting the expected
// number of renewing clients from the count. A peer that is down, or
// answers empty or 503 (syncing itself), has nothing to give; when every
// peer has answered so, the cluster is new and the node serves at once. It
// waits only while some peer has not answered, until ctx ends or
// StartupSyncTimeout passes, and logs what it decided. Synced is closed
// when it returns: until then the REST API answers reads 503.
func (p *Peers) SyncFrom(ctx context.Context) int {
	defer p.syncOnce.Do(func() { close(p.synced) })
	if len(p.peers) == 0 {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.StartupSyncTimeout)
	type answer struct {
		pe   *peer
		apps *eureka.Applications
		self bool
		err  error
	}
	answers := make(chan answer, len(p.peers))
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }() // the fetches end with ctx
	for _, pe := range p.peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			apps, self, err := p.fetchAll(ctx, pe)
			answers <- answer{pe, apps, self, err}
		}()
	}
	answered := 0
	for answered < len(p.peers) {
		select {
		case a := <-answers:
			answered++
			if a.err != nil {
				p.log.Info("start-up sync: peer has nothing to give", zap.String("peer", a.pe.url.Base), zap.Error(a.err))
				continue
			}
			if a.self {
				continue
			}
			if count := p.adoptAll(a.apps); count > 0 {
				p.store.SetExpectedRenewingClients(count)
				p.log.Info("start-up sync done", zap.String("peer", a.pe.url.Base), zap.Int("instances", count))
				return count
			}
			p.log.Info("start-up sync: peer's registry is empty", zap.String("peer", a.pe.url.Base))
		case <-ctx.Done():
			p.log.Warn("start-up sync: deadline reached before every peer answered; serving an empty registry",
				zap.Int("peers", len(p.peers)), zap.Int("answered", answered))
			return 0
		}
	}
	p.log.Info("start-up sync: no peer has instances (a new cluster, or all restarted); serving an empty registry",
		zap.Int("peers", len(p.peers)))
	return 0
}

// Synced is closed once SyncFrom has returned.
func (p *Peers) Synced() <-chan struct{} { return p.synced }

// adoptAll registers a peer's instances here and counts them.
func (p *Peers) adoptAll(apps *eureka.Applications) int {
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
	return count
}

// fetchAll reads pe's registry, and tells whether pe is this node.
func (p *Peers) fetchAll(ctx context.Context, pe *peer) (*eureka.Applications, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	resp, err := p.client.Do(ctx, pe.url, eurekahttp.Request{Path: "apps/"})
	if err != nil {
		return nil, false, err
	}
	if p.identified(pe, resp) {
		return nil, true, nil
	}
	if resp.Status != http.StatusOK {
		return nil, false, errors.New("full fetch answered " + http.StatusText(resp.Status))
	}
	apps, err := eureka.DecodeApplicationsJSON(resp.Body)
	return apps, false, err
}
