package replication

import (
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"
)

// send is a peer's sender: it waits for tasks, lets a batch fill for up to
// MaxBatchDelay (or until it is full), sends it, and handles the outcome.
func (p *Peers) send(pe *peer) {
	defer p.wg.Done()
	for {
		if pe.length() == 0 {
			select {
			case <-p.stop:
				return
			case <-pe.wake:
				continue
			}
		}
		if pe.length() < p.cfg.BatchSize {
			timer := time.NewTimer(p.cfg.MaxBatchDelay)
			select {
			case <-p.stop:
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		batch, expired := pe.take(p.cfg.BatchSize, p.cfg.Clock.Now())
		if expired > 0 {
			pe.dropped.Add(uint64(expired))
		}
		if len(batch) == 0 {
			continue
		}
		if wait := p.deliver(pe, batch); wait > 0 {
			pe.requeue(batch)
			timer := time.NewTimer(wait)
			select {
			case <-p.stop:
				timer.Stop()
				return
			case <-timer.C:
			}
		}
	}
}

// deliver sends one batch and returns how long to wait before resending it
// (0: done, delivered or dropped).
func (p *Peers) deliver(pe *peer, batch []*task) time.Duration {
	items := make([]Item, len(batch))
	for n, t := range batch {
		items[n] = t.item
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(http.MethodPost)
	req.SetRequestURI(pe.url.Base + "peerreplication/batch/")
	req.Header.SetContentType("application/json")
	req.Header.Set("Accept", "application/json")
	if pe.url.Authorization != "" {
		req.Header.Set("Authorization", pe.url.Authorization)
	}
	req.SetBody(AppendBatch(nil, items))
	err := p.client.DoTimeout(req, resp, p.cfg.Timeout)
	switch {
	case err != nil:
		p.failed(pe, err.Error())
		var ne net.Error
		if errors.Is(err, fasthttp.ErrTimeout) || (errors.As(err, &ne) && ne.Timeout()) {
			return p.cfg.CongestionRetry
		}
		return p.cfg.NetworkRetry
	case resp.StatusCode() == http.StatusServiceUnavailable:
		p.failed(pe, "503 Service Unavailable")
		return p.cfg.CongestionRetry
	case resp.StatusCode()/100 != 2:
		p.failed(pe, "batch refused with status "+http.StatusText(resp.StatusCode()))
		pe.dropped.Add(uint64(len(batch)))
		return 0 // a permanent error: drop the batch
	}
	pe.sent.Add(1)
	pe.lastSuccess.Store(time.Now().UnixNano())
	if pe.down.Swap(false) {
		p.log.Info("peer is back", zap.String("peer", pe.url.Base))
	}
	body, _ := resp.BodyUncompressed()
	results, err := DecodeResults(body)
	if err != nil || len(results) != len(items) {
		return 0 // Eureka skips the per-item analysis too
	}
	for n, r := range results {
		p.itemResult(pe, items[n], r)
	}
	return 0
}

// failed counts a failed batch and logs the first of a run.
func (p *Peers) failed(pe *peer, msg string) {
	pe.failures.Add(1)
	pe.lastError.Store(msg)
	if !pe.down.Swap(true) {
		p.log.Warn("peer is down; replication queued", zap.String("peer", pe.url.Base), zap.String("error", msg))
	}
}
