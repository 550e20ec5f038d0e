package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// What the cluster study asks of a node: how many instances it holds, its
// whole registry as a client reads it, and heartbeats at a set rate.

// registeredOn is the registered-instances count of addr's
// GET /eureka/status (JSON): cheap, it builds no registry document, and
// it answers while the node syncs (it is not a read of the registry).
func registeredOn(addr string) (int, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + addr + "/eureka/status")
	req.Header.Set("Accept", "application/json")
	if err := fasthttp.DoTimeout(req, resp, 5*time.Second); err != nil {
		return 0, err
	}
	if resp.StatusCode() != fasthttp.StatusOK {
		return 0, fmt.Errorf("GET /eureka/status: status %d", resp.StatusCode())
	}
	var doc struct {
		ApplicationStats map[string]string `json:"applicationStats"`
	}
	if err := json.Unmarshal(resp.Body(), &doc); err != nil {
		return 0, fmt.Errorf("GET /eureka/status: %v", err)
	}
	return strconv.Atoi(doc.ApplicationStats["registered-instances"])
}

// openProbe is a read the node answers 404 once it serves reads (no app
// has this name) and 503 while it syncs from its peers: a cheap way to
// know it is open, which builds no registry document.
const openProbe = "/eureka/apps/EUREKABENCH-OPEN-PROBE"

// registryRead is one full read of a node's registry.
type registryRead struct {
	took      time.Duration // until the last byte
	status    int           // 0: no answer
	instances int           // counted in the decoded document
	bytes     int64         // gzipped, as sent
	err       error         // no answer, or the body broke off or would not decode
}

// whole reports whether the read answered 200 with n instances, in full.
func (rd registryRead) whole(n int) bool {
	return rd.status == http.StatusOK && rd.err == nil && rd.instances == n
}

// readRegistry reads the whole registry of addr as Spring's client does
// (GET /eureka/apps/, JSON, gzip) to its last byte, which ends its time,
// and then counts the instances in the decoded document (their
// "instanceId" keys), so that the count's CPU, on the cores the nodes
// share, is not in the time; a body that broke off fails gzip's length
// and checksum, and is an error.
func readRegistry(ctx context.Context, client *http.Client, addr string) registryRead {
	var rd registryRead
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/eureka/apps/", nil)
	if err != nil {
		rd.err = err
		return rd
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		rd.took, rd.err = time.Since(start), err
		return rd
	}
	defer resp.Body.Close()
	rd.status = resp.StatusCode
	if rd.status != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		rd.took = time.Since(start)
		return rd
	}
	body, err := io.ReadAll(resp.Body)
	rd.took, rd.bytes = time.Since(start), int64(len(body))
	switch enc := resp.Header.Get("Content-Encoding"); {
	case err != nil:
		rd.err = err
	case enc != "gzip":
		rd.err = fmt.Errorf("Content-Encoding %q, not gzip", enc)
	default:
		rd.instances, rd.err = countInGzip(body, jsonInstancePattern)
	}
	return rd
}

// pacedResult is what pacedHeartbeats measured.
type pacedResult struct {
	wall     time.Duration
	sent     int64   // due at the rate over the duration
	skipped  int64   // due while every connection to its node was busy and its queue full: not sent
	perNode  []int64 // answered 200, by node
	failed   int64   // no answer, or another status than 200
	answered latencies
}

// pacedHeartbeats sends rate heartbeats a second for d, spread over addrs
// in turn (heartbeat n to addrs[n mod len(addrs)], for instance paths[n
// mod len(paths)]), each node's over conns connections, and waits for
// the last answer. Every 5 ms a pacer hands the heartbeats then due to
// each node's queue (a tenth of a second of its share); a heartbeat due
// while its queue is full is skipped and counted, so a node that falls
// behind shows as a rate not made rather than as a backlog. A latency is
// from the request's send to its answer. authorization, if set, is each
// heartbeat's Authorization header.
func pacedHeartbeats(ctx context.Context, addrs, paths []string, rate int, d time.Duration, conns int, authorization string) *pacedResult {
	res := &pacedResult{perNode: make([]int64, len(addrs))}
	queues := make([]chan int, len(addrs))
	answered := make([]atomic.Int64, len(addrs))
	var failed atomic.Int64
	lat := make([][]time.Duration, len(addrs)*conns)
	var wg sync.WaitGroup
	for k, addr := range addrs {
		queues[k] = make(chan int, max(1, rate/len(addrs)/10))
		client := &fasthttp.HostClient{Addr: addr, MaxConns: conns, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
		defer client.CloseIdleConnections()
		for w := range conns {
			wg.Go(func() {
				req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				defer fasthttp.ReleaseRequest(req)
				defer fasthttp.ReleaseResponse(resp)
				mine := &lat[k*conns+w]
				for n := range queues[k] {
					req.Reset()
					req.Header.SetMethod("PUT")
					req.SetRequestURI("http://" + addr + paths[n%len(paths)])
					if authorization != "" {
						req.Header.Set("Authorization", authorization)
					}
					start := time.Now()
					if err := client.Do(req, resp); err != nil || resp.StatusCode() != fasthttp.StatusOK {
						failed.Add(1)
						continue
					}
					*mine = append(*mine, time.Since(start))
					answered[k].Add(1)
				}
			})
		}
	}
	start := time.Now()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var sent int64
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
		}
		elapsed := min(time.Since(start), d)
		done = done || elapsed == d
		for due := int64(elapsed.Seconds() * float64(rate)); sent < due; sent++ {
			select {
			case queues[sent%int64(len(addrs))] <- int(sent):
			default:
				res.skipped++
			}
		}
	}
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
	res.wall, res.sent, res.failed = time.Since(start), sent, failed.Load()
	var all []time.Duration
	for k := range addrs {
		res.perNode[k] = answered[k].Load()
	}
	for _, l := range lat {
		all = append(all, l...)
	}
	res.answered = summarize(all)
	return res
}
