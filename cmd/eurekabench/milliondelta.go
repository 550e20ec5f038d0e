package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
)

// The million study's deltas: clients reading the delta once a second
// while changes happen at a rate.

// deltaResult is the delta phase's.
type deltaResult struct {
	latencies             []time.Duration // each client's first fetches first
	headers               []time.Duration // until each answer's header, in the same order
	firstRound            int             // how many of latencies are first fetches
	firstBytes, lastBytes int64
	firstBody             []byte
	changes               int64
	changeFailures        int64
}

// deltasAndChanges runs the delta clients and the changes for c.d.
func (r *millionRun) deltasAndChanges() (*deltaResult, error) {
	c := r.c
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	start := time.Now()
	endAt := start.Add(c.d)
	res := &deltaResult{}

	// The changes: a generator at the rate asked, four workers so that a
	// slow answer does not lower it (the rate made is reported).
	var changes, failures atomic.Int64
	work := make(chan int, c.changesPerSec)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(work)
		tick := time.NewTicker(time.Second / time.Duration(c.changesPerSec))
		defer tick.Stop()
		for k := 0; ; k++ {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				if now.After(endAt) {
					return
				}
			}
			select {
			case work <- k:
			default: // the workers are behind
			}
		}
	})
	for range 4 {
		wg.Go(func() {
			client := &fasthttp.HostClient{Addr: r.addr, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
			defer client.CloseIdleConnections()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			var body []byte
			for k := range work {
				want := buildChange(req, r.addr, k, c.instances, c.apps, &body)
				if err := client.Do(req, resp); err != nil || resp.StatusCode() != want {
					failures.Add(1)
					continue
				}
				changes.Add(1)
			}
		})
	}

	// The delta clients.
	client := docClient(c.deltaClients)
	defer client.CloseIdleConnections()
	reads := make([][]docRead, c.deltaClients) // each client's, in order
	var firstErr atomic.Value
	var clientsWG sync.WaitGroup
	for k := range c.deltaClients {
		clientsWG.Go(func() {
			next := start.Add(time.Duration(k) * time.Second / time.Duration(c.deltaClients))
			for next.Before(endAt) && ctx.Err() == nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Until(next)):
				}
				keep := k == 0 && len(reads[k]) == 0 // the first delta, counted after the run
				rd, err := readDoc(ctx, client, r.addr, "/eureka/apps/delta", "application/json", true, keep, nil)
				if err != nil {
					if ctx.Err() == nil {
						firstErr.CompareAndSwap(nil, fmt.Errorf("delta client %d: %v", k, err))
						cancel()
					}
					return
				}
				if keep {
					res.firstBody, res.firstBytes = rd.kept, rd.bytes
					rd.kept = nil
				}
				reads[k] = append(reads[k], rd)
				// Once a second; a tick missed while waiting is skipped.
				for next = next.Add(time.Second); next.Before(time.Now()); next = next.Add(time.Second) {
				}
			}
		})
	}
	clientsWG.Wait()
	cancel()
	wg.Wait()
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	if err, _ := firstErr.Load().(error); err != nil {
		return nil, err
	}
	add := func(rd docRead) {
		res.latencies = append(res.latencies, rd.took)
		res.headers = append(res.headers, rd.header)
	}
	for k := range reads {
		if len(reads[k]) > 0 {
			add(reads[k][0])
		}
	}
	res.firstRound = len(res.latencies)
	for k := range reads {
		for _, rd := range reads[k][min(1, len(reads[k])):] {
			add(rd)
		}
	}
	if n := len(reads[0]); n > 0 {
		res.lastBytes = reads[0][n-1].bytes
	}
	if len(res.latencies) == 0 {
		return nil, errors.New("no delta was answered")
	}
	res.changes, res.changeFailures = changes.Load(), failures.Load()
	return res, nil
}

// buildChange makes change k into req and returns the status it must be
// answered with: k mod 4 is 0, a status override OUT_OF_SERVICE on a
// random instance; 1, that override removed (back to UP); 2 and 3, a
// random instance registered again with new metadata.
func buildChange(req *fasthttp.Request, addr string, k, instances, apps int, body *[]byte) int {
	rng := rand.New(rand.NewPCG(31, uint64(k/2)))
	n := rng.IntN(instances)
	req.Reset()
	path := millionPath(n, apps)
	switch k % 4 {
	case 0:
		req.Header.SetMethod("PUT")
		req.SetRequestURI("http://" + addr + path + "/status?value=OUT_OF_SERVICE")
		return fasthttp.StatusOK
	case 1:
		req.Header.SetMethod("DELETE")
		req.SetRequestURI("http://" + addr + path + "/status?value=UP")
		return fasthttp.StatusOK
	}
	if k%4 == 3 {
		n = rand.New(rand.NewPCG(32, uint64(k))).IntN(instances)
	}
	i := millionInstance(n, apps)
	i.Metadata["change"] = strconv.Itoa(k)
	i.LastDirtyTimestamp = time.Now().UnixMilli()
	*body = eureka.AppendInstanceJSON((*body)[:0], i)
	req.Header.SetMethod("POST")
	req.SetRequestURI("http://" + addr + "/eureka/apps/" + i.App)
	req.Header.SetContentType("application/json")
	req.SetBody(*body)
	return fasthttp.StatusNoContent
}
