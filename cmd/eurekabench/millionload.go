package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
)

// The million study's load: the registrations, the heartbeats, the
// documents read and the changes made while they are.

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

// docRead is one document read.
type docRead struct {
	name        string
	full        bool // the full registry, not the delta
	bytes       int64
	header      time.Duration // until the answer's header
	took        time.Duration // until its last byte
	count       int           // instances counted in it, -1 when not counted
	cpu         time.Duration // the server's, heartbeats included
	beats       int64         // heartbeats answered meanwhile
	contentType string
	kept        []byte // the body, when asked to keep it
	pattern     []byte // what counts its instances
	rss, hwm    uint64 // the server's VmRSS and VmHWM after it
}

// The patterns counted to tell how many instances a document holds.
var (
	jsonInstancePattern = []byte(`"instanceId":`)
	xmlInstancePattern  = []byte(`<instanceId>`)
)

// readDoc GETs path with accept, gzipped when gz (the answer must then be
// gzip; it is not decoded), to the end; it keeps the body when keep, and
// counts count in it when given (plain answers).
func readDoc(ctx context.Context, client *http.Client, addr, path, accept string, gz, keep bool, count []byte) (docRead, error) {
	d := docRead{count: -1}
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+path, nil)
	if err != nil {
		return d, err
	}
	req.Header.Set("Accept", accept)
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return d, err
	}
	defer resp.Body.Close()
	d.header = time.Since(start)
	d.contentType = resp.Header.Get("Content-Type")
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return d, fmt.Errorf("GET %s: status %d: %s", path, resp.StatusCode, b)
	}
	if enc := resp.Header.Get("Content-Encoding"); (enc == "gzip") != gz {
		return d, fmt.Errorf("GET %s (gzip %v): Content-Encoding %q", path, gz, enc)
	}
	var w []io.Writer
	var kept bytes.Buffer
	if keep {
		w = append(w, &kept)
	}
	var counter *patternCounter
	if count != nil {
		counter = &patternCounter{pat: count}
		w = append(w, counter)
	}
	dst := io.Discard
	if len(w) > 0 {
		dst = io.MultiWriter(w...)
	}
	n, err := io.CopyBuffer(dst, resp.Body, make([]byte, 256<<10))
	d.took, d.bytes = time.Since(start), n
	if err != nil {
		return d, fmt.Errorf("GET %s: after %d bytes: %v", path, n, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return d, fmt.Errorf("GET %s: %d bytes of %d", path, n, resp.ContentLength)
	}
	if counter != nil {
		d.count = counter.n
	}
	d.kept = kept.Bytes()
	return d, nil
}

// docClient is an HTTP client for documents: gzip left to the caller
// (the body is not decoded), its own connections, no timeout short of a
// few minutes.
func docClient(conns int) *http.Client {
	return &http.Client{Timeout: 10 * time.Minute, Transport: &http.Transport{
		DisableCompression: true, MaxIdleConnsPerHost: conns, ReadBufferSize: 256 << 10,
	}}
}

// fullResult is the first full fetches'.
type fullResult struct {
	wall, firstHeader, firstDone time.Duration
	bytes                        int64
	sizes                        []int64
	kept                         []byte // the first reader's body
}

func (f *fullResult) sameNote() string {
	for _, s := range f.sizes {
		if s != f.sizes[0] {
			return fmt.Sprintf(" (sizes differ: %v)", f.sizes)
		}
	}
	return fmt.Sprintf(" (all %d the same length)", len(f.sizes))
}

// firstFullFetches sends c.readers gzip JSON full fetches at once, each on
// a connection of its own opened beforehand.
func (r *millionRun) firstFullFetches() (*fullResult, error) {
	n := r.c.readers
	clients := make([]*http.Client, n)
	for k := range clients {
		clients[k] = docClient(1)
		defer clients[k].CloseIdleConnections()
		// Open the connection first: GET /eureka/status is cheap and
		// builds no registry document.
		req, _ := http.NewRequestWithContext(r.ctx, "GET", "http://"+r.addr+"/eureka/status", nil)
		req.Header.Set("Accept", "application/json")
		resp, err := clients[k].Do(req)
		if err != nil {
			return nil, fmt.Errorf("opening reader %d's connection: %v", k, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	reads := make([]docRead, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	begin := make(chan struct{})
	for k := range n {
		wg.Go(func() {
			<-begin
			reads[k], errs[k] = readDoc(r.ctx, clients[k], r.addr, "/eureka/apps/", "application/json", true, k == 0, nil)
		})
	}
	start := time.Now()
	close(begin)
	wg.Wait()
	wall := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	res := &fullResult{wall: wall, firstHeader: reads[0].header, firstDone: reads[0].took, bytes: reads[0].bytes, kept: reads[0].kept}
	for _, rd := range reads {
		res.firstHeader = min(res.firstHeader, rd.header)
		res.firstDone = min(res.firstDone, rd.took)
		res.sizes = append(res.sizes, rd.bytes)
	}
	return res, nil
}

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

// eachFormat reads each document in each format and encoding not read
// yet, one after the other.
func (r *millionRun) eachFormat() ([]docRead, error) {
	client := docClient(1)
	defer client.CloseIdleConnections()
	var out []docRead
	for _, d := range []struct {
		name   string
		path   string
		accept string
		gz     bool
	}{
		{"full JSON plain", "/eureka/apps/", "application/json", false},
		{"full XML plain", "/eureka/apps/", "application/xml", false},
		{"full XML gzip", "/eureka/apps/", "application/xml", true},
		{"delta JSON plain", "/eureka/apps/delta", "application/json", false},
		{"delta XML plain", "/eureka/apps/delta", "application/xml", false},
		{"delta XML gzip", "/eureka/apps/delta", "application/xml", true},
	} {
		pat := jsonInstancePattern
		if strings.Contains(d.accept, "xml") {
			pat = xmlInstancePattern
		}
		count := pat
		if d.gz {
			count = nil // counted after the run, when the load has stopped
		}
		beats0 := r.hb.count.Load()
		end := r.meter.phase("read " + d.name)
		rd, err := readDoc(r.ctx, client, r.addr, d.path, d.accept, d.gz, d.gz, count)
		m := end()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", d.name, err)
		}
		rd.cpu, rd.beats = serverCPU(m), r.hb.count.Load()-beats0
		rd.rss, rd.hwm = m.ServerRSS, m.ServerHWM
		rd.name, rd.full, rd.pattern = d.name, d.path == "/eureka/apps/", pat
		out = append(out, rd)
	}
	return out, nil
}

// patternCounter counts the occurrences of pat in what is written to it,
// across writes (pat must not overlap itself, as `"instanceId":` does
// not).
type patternCounter struct {
	pat  []byte
	tail []byte // the last len(pat)-1 bytes written
	n    int
}

func (c *patternCounter) Write(p []byte) (int, error) {
	keep := len(c.pat) - 1
	if len(c.tail) > 0 {
		// The occurrences that begin in the tail and end in p.
		joined := append(slices.Clip(c.tail), p[:min(len(p), keep)]...)
		c.n += bytes.Count(joined, c.pat)
	}
	c.n += bytes.Count(p, c.pat)
	c.tail = append(c.tail, p[max(0, len(p)-keep):]...)
	if len(c.tail) > keep {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-keep:]...)
	}
	return len(p), nil
}

// countInGzip counts pat in the gzip member body.
func countInGzip(body, pat []byte) (int, error) {
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	c := &patternCounter{pat: pat}
	if _, err := io.CopyBuffer(c, zr, make([]byte, 1<<20)); err != nil {
		return 0, err
	}
	return c.n, nil
}
