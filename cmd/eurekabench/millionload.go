package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
)

// The million study's load: the registrations and the heartbeats; the
// documents it reads are in millionread.go, the deltas and changes in
// milliondelta.go.

// registerBulk registers instances millionInstance 0 to instances-1 on
// addr, from conns clients at once, as fast as they are answered (204
// each), and returns how long it took; study names the progress lines it
// writes on stderr every 10 s.
func registerBulk(ctx context.Context, study, addr string, instances, apps, conns int) (time.Duration, error) {
	client := &fasthttp.HostClient{Addr: addr, MaxConns: conns, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
	defer client.CloseIdleConnections()
	var next, done atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	stopProgress := make(chan struct{})
	var progress sync.WaitGroup
	progress.Go(func() { // on stderr: at a million this takes minutes
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stopProgress:
				return
			case <-tick.C:
				n := done.Load()
				fmt.Fprintf(os.Stderr, "eurekabench %s: %s registered in %.0f s\n", study, commas(int(n)), time.Since(start).Seconds())
			}
		}
	})
	defer progress.Wait()
	defer close(stopProgress)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			var body []byte
			for ctx.Err() == nil && firstErr.Load() == nil {
				n := int(next.Add(1) - 1)
				if n >= instances {
					return
				}
				i := millionInstance(n, apps)
				body = eureka.AppendInstanceJSON(body[:0], i)
				req.Reset()
				req.Header.SetMethod("POST")
				req.SetRequestURI("http://" + addr + "/eureka/apps/" + i.App)
				req.Header.SetContentType("application/json")
				req.SetBody(body)
				if err := client.Do(req, resp); err != nil {
					firstErr.CompareAndSwap(nil, fmt.Errorf("registering %s: %v", i.InstanceID, err))
					return
				}
				if resp.StatusCode() != fasthttp.StatusNoContent {
					firstErr.CompareAndSwap(nil, fmt.Errorf("registering %s: status %d", i.InstanceID, resp.StatusCode()))
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// heartbeats are the heartbeat connections: each sends PUT
// /eureka/apps/<app>/<id> for instance w, w+conns, ... in turn, one after
// the other, until halted, and keeps each answer's latency under the
// phase it was sent in.
type heartbeats struct {
	phase    atomic.Int32
	stop     atomic.Bool
	count    atomic.Int64 // answered (200 or 404)
	notFound atomic.Int64
	failed   atomic.Int64 // no answer, or another status
	lat      [][phases][]time.Duration
	wg       sync.WaitGroup
	halted   sync.Once
}

func startHeartbeats(addr string, paths []string, conns int) *heartbeats {
	h := &heartbeats{lat: make([][phases][]time.Duration, conns)}
	for w := range conns {
		h.wg.Go(func() {
			client := &fasthttp.HostClient{Addr: addr, MaxConns: 1, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
			defer client.CloseIdleConnections()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			lat := &h.lat[w]
			for n := w; !h.stop.Load(); n += conns {
				req.Reset()
				req.Header.SetMethod("PUT")
				req.SetRequestURI("http://" + addr + paths[n%len(paths)])
				p := h.phase.Load()
				start := time.Now()
				err := client.Do(req, resp)
				took := time.Since(start)
				switch {
				case err != nil:
					h.failed.Add(1)
					time.Sleep(10 * time.Millisecond) // the server may be gone: do not spin
					continue
				case resp.StatusCode() == fasthttp.StatusNotFound:
					h.notFound.Add(1)
				case resp.StatusCode() != fasthttp.StatusOK:
					h.failed.Add(1)
					continue
				}
				lat[p] = append(lat[p], took)
				h.count.Add(1)
			}
		})
	}
	return h
}

// halt stops the heartbeats and waits for them.
func (h *heartbeats) halt() {
	h.halted.Do(func() {
		h.stop.Store(true)
		h.wg.Wait()
	})
}

// latencies summarizes the heartbeats, once halted: over the run and per
// phase.
func (h *heartbeats) latencies() (all latencies, per [phases]latencies) {
	var every []time.Duration
	for p := range phases {
		var l []time.Duration
		for w := range h.lat {
			l = append(l, h.lat[w][p]...)
		}
		every = append(every, l...)
		per[p] = summarize(l)
	}
	return summarize(every), per
}
