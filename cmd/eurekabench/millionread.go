package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// The documents the million study reads: one read (readDoc), the first
// full fetches, one read of each format, and the instances counted in
// them.

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
