package replication

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/internal/eurekahttp"
)

// send is a peer's sender: it waits for tasks, lets a batch fill for up to
// MaxBatchDelay if one is set (or until it is full), sends it, and handles
// the outcome.
func (p *Peers) send(pe *peer) {
	defer p.wg.Done()
	defer close(pe.done)
	for {
		if pe.length() == 0 {
			select {
			case <-pe.ctx.Done():
				return
			case <-pe.wake:
				continue
			}
		}
		if !p.fill(pe) {
			return
		}
		switch self, err := p.identify(pe); {
		case self:
			pe.take(pe.length(), p.cfg.Clock.Now()) // this node itself: drop what queued before it knew
			return
		case err != nil && pe.ctx.Err() != nil:
			return // stopped, or the peer left while it was asked
		case err != nil:
			// Unreachable before it could say who it is: wait as after a
			// failed batch, without sending one too.
			p.failed(pe, err)
			if !p.sleep(pe, p.retryAfter(err)) {
				return
			}
			continue
		}
		batch, expired := pe.take(p.cfg.BatchSize, p.cfg.Clock.Now())
		if expired > 0 {
			pe.dropped.Add(uint64(expired))
		}
		if len(batch) == 0 {
			continue
		}
		if retry, wait := p.deliver(pe, batch); wait > 0 {
			pe.requeue(retry, p.cfg.MaxQueue)
			if !p.sleep(pe, wait) {
				return
			}
		}
	}
}

// fill lets a batch fill before it is sent: for MaxBatchDelay if one is
// set, else for HeartbeatBatchDelay while the queue holds heartbeats
// alone, ending early when the batch is full or (for heartbeats) another
// write arrives, which goes at once and takes them along. Heartbeats wait
// so that a peer gets them a batch at a time, not a request each
// (docs/performance.md has what each cost). It reports false if the
// Peers stopped.
func (p *Peers) fill(pe *peer) bool {
	delay, beats := p.cfg.MaxBatchDelay, false
	if delay <= 0 {
		delay, beats = p.cfg.HeartbeatBatchDelay, true
	}
	var urgent <-chan struct{}
	if beats {
		select { // a signal of a task already sent
		case <-pe.urgent:
		default:
		}
		urgent = pe.urgent
	}
	if delay <= 0 || pe.length() >= p.cfg.BatchSize || (beats && !pe.heartbeatsOnly()) {
		return true
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		select {
		case <-pe.ctx.Done():
			return false
		case <-timer.C:
			return true
		case <-urgent:
			return true
		case <-pe.wake:
			if pe.length() >= p.cfg.BatchSize {
				return true
			}
		}
	}
}

// sleep waits d, and reports false if the Peers stopped or pe left
// meanwhile.
func (p *Peers) sleep(pe *peer, d time.Duration) bool {
	return sleep(pe.ctx, d)
}

// retryAfter is the wait after a request that failed with err: longer
// after a timeout (congestion) than after other network errors.
func (p *Peers) retryAfter(err error) time.Duration {
	if eurekahttp.IsTimeout(err) {
		return p.cfg.CongestionRetry
	}
	return p.cfg.NetworkRetry
}

// deliver sends one batch and returns the tasks to resend, and how long to
// wait first (0: done, delivered or dropped). A batch over MaxBatchBytes,
// or one the peer finds too large (413), is split in halves, each sent in
// turn; a single task still too large is dropped.
func (p *Peers) deliver(pe *peer, batch []*task) ([]*task, time.Duration) {
	wait := p.deliverOnce(pe, batch)
	if wait != tooLarge {
		return batch, wait
	}
	if len(batch) == 1 {
		p.failed(pe, errors.New("a task larger than the peer takes; dropped"))
		pe.dropped.Add(1)
		return nil, 0
	}
	half := len(batch) / 2
	if retry, wait := p.deliver(pe, batch[:half]); wait > 0 {
		return append(retry, batch[half:]...), wait
	}
	return p.deliver(pe, batch[half:])
}

// tooLarge is deliverOnce's answer to a 413, or to a batch over
// MaxBatchBytes.
const tooLarge = time.Duration(-1)

// deliverOnce sends one batch and returns how long to wait before resending
// it (0: done, delivered or dropped; tooLarge: split it, unsent when it is
// over MaxBatchBytes).
func (p *Peers) deliverOnce(pe *peer, batch []*task) time.Duration {
	items := make([]Item, len(batch))
	for n, t := range batch {
		items[n] = t.item
	}
	body := AppendBatch(nil, items)
	if int64(len(body)) > p.cfg.MaxBatchBytes {
		return tooLarge // split, or dropped alone, unsent
	}
	ctx, cancel := context.WithTimeout(pe.ctx, p.cfg.Timeout)
	defer cancel()
	resp, err := p.client.Do(ctx, pe.url, eurekahttp.Request{Method: http.MethodPost, Path: "peerreplication/batch/", Body: body})
	switch {
	case err != nil && pe.ctx.Err() != nil:
		return p.cfg.NetworkRetry // stopped, or the peer left: its queue goes
	case err != nil:
		p.failed(pe, err)
		return p.retryAfter(err)
	case resp.Status == http.StatusServiceUnavailable:
		p.failed(pe, errors.New("503 Service Unavailable"))
		return p.cfg.CongestionRetry
	case resp.Status == http.StatusRequestEntityTooLarge:
		return tooLarge
	case resp.Status/100 != 2:
		p.failed(pe, errors.New("batch refused with status "+http.StatusText(resp.Status)))
		pe.dropped.Add(uint64(len(batch)))
		return 0 // a permanent error: drop the batch
	}
	pe.sent.Add(1)
	pe.lastSuccess.Store(time.Now().UnixNano())
	if pe.down.Swap(false) {
		p.log.Info("peer is back", zap.String("peer", pe.url.Base))
	}
	results, err := DecodeResults(resp.Body)
	if err != nil || len(results) != len(items) {
		return 0 // Eureka skips the per-item analysis too
	}
	for n, r := range results {
		p.itemResult(pe, items[n], r)
	}
	return 0
}

// failed counts a failed batch and logs the first of a run. A
// connection that could not be made has the peers' DNS names looked up
// again: the peer may have moved or left.
func (p *Peers) failed(pe *peer, err error) {
	pe.failures.Add(1)
	pe.lastError.Store(err.Error())
	if !pe.down.Swap(true) {
		p.log.Warn("peer is down; replication queued", zap.String("peer", pe.url.Base), zap.String("error", err.Error()))
	}
	if connectFailed(err) {
		p.resolveSoon()
	}
}
