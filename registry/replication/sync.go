package replication

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/eurekahttp"
)

// SyncFrom fills the Store at start-up, as Eureka's syncUp and
// openForTraffic do, and closes Synced when reads may be served (until
// then the REST API answers them 503). It returns how many instances it
// adopted.
//
// A pass looks the peers' DNS names up, if any, asks the peers in turn
// for their registry (gzip, decoded and registered as it streams in, each
// instance as a replication so nothing is sent back) and ends at the
// first peer whose whole registry holds instances; the expected number of
// renewing clients is set from it. A peer that answered 200 with an empty
// registry, is down (refuses the connection), or answers 503 saying it is
// syncing itself (Eurekagate-Syncing) has nothing to give; when every
// peer is so, the cluster is new (or was restarted whole) and reads open
// at once, so nodes started together open together. Any other failure
// (an answer over MaxResponseBytes, a timeout, another status, a reset, a
// document cut short, a DNS look-up that fails) is an error: logged as a
// warning with its cause, and the peers are asked again after
// StartupSyncRetryWait, doubling up to 30 s, until StartupSyncTimeout has
// passed since the start. If it passes with errors and no registry, the
// node follows Eureka's waitTimeInMsWhenSyncEmpty: reads stay refused
// until StartupSyncEmptyWait after the start, while writes and the peers'
// replication (a heartbeat of an instance missing here is answered 404,
// and the peer registers it) fill the registry; then reads open.
//
// When ctx ends, SyncFrom returns at once and reads open.
func (p *Peers) SyncFrom(ctx context.Context) int {
	defer p.open()
	if len(p.current()) == 0 && !p.hasDNSNames() {
		return 0
	}
	start := time.Now()
	passes, cancel := context.WithTimeout(ctx, p.cfg.StartupSyncTimeout)
	defer cancel()
	wait := p.cfg.StartupSyncRetryWait
	for {
		// The peers the DNS names give now; a look-up that fails is a
		// peer that may hold the registry, asked again like one.
		lookups := p.resolve(passes)
		count, failed := p.syncPass(passes)
		failed += lookups
		switch {
		case count > 0:
			return count
		case failed == 0:
			p.open()
			p.log.Info("start-up sync: no peer has instances (a new cluster, or all restarted); serving an empty registry",
				zap.Int("peers", len(p.current())))
			return 0
		case ctx.Err() != nil:
			return 0
		}
		if !sleep(passes, wait) {
			break
		}
		wait = min(2*wait, maxSyncRetryWait)
	}
	p.copyDone() // the peers' replication fills it now
	if ctx.Err() != nil {
		return 0
	}
	open := start.Add(p.cfg.StartupSyncEmptyWait)
	p.log.Warn("start-up sync: deadline passed with errors and no registry from any peer (not every peer was down, empty or syncing); "+
		"reads stay refused (503) until the empty-sync wait has passed (Eureka's waitTimeInMsWhenSyncEmpty), while the peers' replication fills the registry",
		zap.Duration("startup_sync_timeout", p.cfg.StartupSyncTimeout), zap.Time("reads_open_at", open))
	if sleep(ctx, time.Until(open)) {
		p.open()
		p.log.Info("start-up sync: the empty-sync wait has passed; serving reads", zap.Int("instances", p.store.Len()))
	}
	return 0
}

// StartSync runs SyncFrom in the background, so that the node listens
// (answering reads 503, taking writes and the peers' replication) while
// it syncs; Synced tells when it is done, and Stop ends it and waits.
func (p *Peers) StartSync() {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.SyncFrom(p.life)
	}()
}

// maxSyncRetryWait caps the back-off between passes: Eureka's
// registrySyncRetryWaitMs.
const maxSyncRetryWait = 30 * time.Second

// sleep waits d, and reports false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// copyDone closes Copied: replicated writes may be applied.
func (p *Peers) copyDone() { p.copyOnce.Do(func() { close(p.copied) }) }

// open closes Copied and Synced: reads may be served.
func (p *Peers) open() {
	p.copyDone()
	p.syncOnce.Do(func() { close(p.synced) })
}

// Copied is closed once the start-up sync's passes are over, before the
// empty-sync wait: until then a replicated write must wait (the REST API
// answers it 503, and the peer sends it again), since a cancel applied
// before the copy reaches its instance would be undone by the copy.
func (p *Peers) Copied() <-chan struct{} { return p.copied }

// Synced is closed once SyncFrom has returned.
func (p *Peers) Synced() <-chan struct{} { return p.synced }

// syncPass asks each peer in turn until one gives a registry with
// instances, and returns how many it adopted, and how many peers failed
// with an error rather than having nothing to give.
func (p *Peers) syncPass(ctx context.Context) (adopted, failed int) {
	for _, pe := range p.current() {
		if pe.self.Load() {
			continue
		}
		took := time.Now()
		got, count, err := p.fetchRegistry(ctx, pe)
		base := zap.String("peer", pe.url.Base)
		switch got {
		case peerGave:
			p.store.SetExpectedRenewingClients(count)
			// Open before saying so: whoever reads the line may read.
			p.open()
			p.log.Info("start-up sync done", base, zap.Int("instances", count), zap.Duration("took", time.Since(took)))
			return count, 0
		case peerFailed:
			failed++
			p.log.Warn("start-up sync: reading the peer's registry failed; it will be asked again", base, zap.Error(err))
		case peerEmpty:
			p.log.Info("start-up sync: the peer's registry is empty", base)
		case peerDown:
			p.log.Info("start-up sync: the peer is down", base, zap.Error(err))
		case peerSyncing:
			p.log.Info("start-up sync: the peer is syncing itself", base)
		}
		if ctx.Err() != nil {
			return 0, failed + 1
		}
	}
	return 0, failed
}

// What a peer had for the start-up sync.
type peerAnswer int

const (
	peerGave    peerAnswer = iota // a registry with instances, read whole
	peerEmpty                     // 200 with no instance
	peerDown                      // refused the connection
	peerSyncing                   // 503 from one of our nodes: starting too
	peerSelf                      // this very node
	peerFailed                    // an error: asked again
)

// fetchRegistry streams pe's registry into the Store, counting the
// instances adopted.
func (p *Peers) fetchRegistry(ctx context.Context, pe *peer) (peerAnswer, int, error) {
	got, count := peerFailed, 0
	err := p.client.Stream(ctx, pe.url, eurekahttp.Request{Path: "apps/"}, func(resp eurekahttp.Response, body io.Reader) error {
		switch {
		case p.identified(pe, resp):
			got = peerSelf
			return nil
		case resp.Status == http.StatusServiceUnavailable && resp.Header.Get(syncingHeader) == "true":
			got = peerSyncing
			return nil
		case resp.Status != http.StatusOK:
			return fmt.Errorf("full fetch answered %d %s", resp.Status, http.StatusText(resp.Status))
		}
		if err := eureka.ReadApplicationsJSON(body, func(a *eureka.Application) error {
			count += p.adoptApp(a)
			return nil
		}); err != nil {
			return err
		}
		if got = peerEmpty; count > 0 {
			got = peerGave
		}
		return nil
	})
	switch {
	case err == nil:
		return got, count, nil
	case errors.Is(err, syscall.ECONNREFUSED):
		return peerDown, 0, err
	case count > 0:
		err = fmt.Errorf("%w (after %d instances)", err, count)
	}
	return peerFailed, 0, err
}

// adoptApp registers a peer's instances of a here and counts them.
func (p *Peers) adoptApp(a *eureka.Application) int {
	count := 0
	for _, i := range a.Instances {
		if i.App == "" {
			i.App = a.Name
		}
		if err := p.store.Adopt(i); err == nil {
			count++
		}
	}
	return count
}
