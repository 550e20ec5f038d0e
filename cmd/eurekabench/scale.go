package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// scaleConfig sizes the scale run; the defaults are the figures the README
// reports.
type scaleConfig struct {
	d            time.Duration // each timed phase
	register     int           // registrations into one app, and spread over 100
	evictApp     int           // the app an eviction run trims
	evicted      int           // how many of its leases expire
	churnSize    int           // registry size under churn
	churnRate    int           // changes per second
	slowSize     int           // registry size for the slow readers
	slowConns    int           // slow full-fetch connections
	vipSize      int           // registry size for the VIP phase
	vipNames     int           // distinct VIP names asked
	memorySizes  []int         // registry sizes for RSS per instance
	heartbeatCon int           // heartbeat connections
	only         string        // one phase, or "" for all
}

var defaultScale = scaleConfig{
	d: 5 * time.Second, register: 10000, evictApp: 15000, evicted: 1500, churnSize: 100000, churnRate: 200,
	slowSize: 20000, slowConns: 40, vipSize: 50000, vipNames: 1000, memorySizes: []int{10000, 50000, 100000},
	heartbeatCon: 16,
}

func scaleCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	c := defaultScale
	fs.DurationVar(&c.d, "duration", c.d, "how long each timed phase runs")
	fs.StringVar(&c.only, "only", "", "run only this phase: register, evict, churn, slow, vip or memory")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	return func(out io.Writer, rec *record) error {
		if *cpuProfile != "" {
			stop, err := startCPUProfile(*cpuProfile)
			if err != nil {
				return err
			}
			defer stop()
		}
		return runScale(c, out, rec)
	}
}

// runScale measures how the registry's cost follows the change rather than
// the registry: writes into one big app, an eviction run beside
// heartbeats, full fetches under churn, slow readers, VIP lookups, and the
// memory each instance costs.
func runScale(c scaleConfig, out io.Writer, rec *record) error {
	fmt.Fprintf(out, "eurekabench scale: %d CPUs (GOMAXPROCS %d), %s per timed phase\n\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), c.d)
	row := func(name, result, note string) { rec.row(out, "%-52s %16s   %s\n", name, result, note) }
	row("measurement", "result", "target")

	if c.run("register") {
		one, err := registerRate(c.register, 1, c.heartbeatCon)
		if err != nil {
			return err
		}
		spread, err := registerRate(c.register, 100, c.heartbeatCon)
		if err != nil {
			return err
		}
		row(fmt.Sprintf("registrations, %d into 1 app", c.register), fmt.Sprintf("%.0f /s", one), "")
		row(fmt.Sprintf("registrations, %d over 100 apps", c.register), fmt.Sprintf("%.0f /s", spread), "")
		row("one app / spread", fmt.Sprintf("%.2f", one/spread), ">= 0.50")
	}
	if c.run("evict") {
		ev, err := evictionStall(c)
		if err != nil {
			return err
		}
		row(fmt.Sprintf("eviction run: %d of a %d-instance app", ev.evicted, c.evictApp), ev.took.Round(time.Millisecond).String(), "")
		row("  heartbeat to another app, max during the run", ev.maxDuring.Round(10*time.Microsecond).String(), "< 50ms")
	}
	if c.run("churn") {
		ch, err := churn(c)
		if err != nil {
			return err
		}
		row(fmt.Sprintf("churn: %d instances, %d changes/s", c.churnSize, c.churnRate), fmt.Sprintf("%.0f changes/s", ch.changes), "")
		row("  heartbeats", fmt.Sprintf("%.0f /s", ch.heartbeats), "")
		row("  heartbeat p50 / p99 / max", fmt.Sprintf("%s / %s / %s", ch.p50.Round(10*time.Microsecond), ch.p99.Round(10*time.Microsecond), ch.max.Round(time.Microsecond*100)), "p99 < 10ms")
		row("  full fetches (JSON, gzip), asked at 10 /s per core", fmt.Sprintf("%.1f /s", ch.fetches), fmt.Sprintf(">= %d /s (%.1f MB each)", 10*runtime.NumCPU(), ch.fetchMB))
		row("  CPU used (server and load, one process)", fmt.Sprintf("%.2f cores", ch.cores), "")
	}
	if c.run("slow") {
		sl, err := slowReaders(c)
		if err != nil {
			return err
		}
		row(fmt.Sprintf("heap, %d instances idle", c.slowSize), mb(sl.idle), "")
		row(fmt.Sprintf("  with %d slow full fetches open (%.0f MB XML each)", c.slowConns, sl.docMB), mb(sl.during), fmt.Sprintf("%+.0f MB, target < +100 MB", (float64(sl.during)-float64(sl.idle))/1e6))
		row("  after they close", mb(sl.after), "")
	}
	if c.run("vip") {
		vip, err := vipLookups(c)
		if err != nil {
			return err
		}
		row(fmt.Sprintf("heartbeats, %d instances", c.vipSize), fmt.Sprintf("%.0f /s", vip.base), "")
		row(fmt.Sprintf("  while 8 clients ask %d distinct VIPs", c.vipNames), fmt.Sprintf("%.0f /s", vip.during), fmt.Sprintf("%.2f of baseline, target >= 0.50 (%.0f VIP queries/s)", vip.during/vip.base, vip.queries))
	}
	if c.run("memory") {
		for _, n := range c.memorySizes {
			rss, heap := memoryPerInstance(n)
			row(fmt.Sprintf("memory per instance at %d, both formats cached", n), fmt.Sprintf("%.1f KB RSS", rss/1024), fmt.Sprintf("%.1f KB heap", heap/1024))
		}
	}
	return nil
}

func (c scaleConfig) run(phase string) bool { return c.only == "" || c.only == phase }

func mb(b uint64) string { return fmt.Sprintf("%.0f MB", float64(b)/1e6) }

// benchServer is a Store behind the standalone fasthttp server.
type benchServer struct {
	store *registry.Store
	srv   *httpapi.Server
	addr  string
}

func startServer(cfg registry.Config) (*benchServer, error) {
	store := registry.New(cfg)
	srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		return nil, err
	}
	return &benchServer{store: store, srv: srv, addr: srv.Addr().String()}, nil
}

func (b *benchServer) stop() { b.srv.Stop(context.Background()) }

// populate registers n sample instances in-process, spread over n/per apps.
func (b *benchServer) populate(n, per int) {
	for k := range n {
		i := fixture.SampleInstance(k)
		i.App = "SERVICE-" + strconv.Itoa(k/per)
		if err := b.store.Register(i, false); err != nil {
			panic(err)
		}
	}
}

// registerRate registers n instances over apps apps through the REST API.
func registerRate(n, apps, conc int) (float64, error) {
	b, err := startServer(registry.Config{})
	if err != nil {
		return 0, err
	}
	defer b.stop()
	bodies := make([][]byte, n)
	for k := range n {
		i := fixture.SampleInstance(k)
		i.App = "APP-" + strconv.Itoa(k%apps)
		bodies[k] = eureka.AppendInstanceJSON(nil, i)
	}
	return loadSpec{addr: b.addr, conc: conc, total: n, want: fasthttp.StatusNoContent, build: func(k int, req *fasthttp.Request) {
		req.Header.SetMethod("POST")
		req.SetRequestURI("/eureka/apps/APP-" + strconv.Itoa(k%apps))
		req.Header.SetContentType("application/json")
		req.SetBody(bodies[k])
	}}.rate()
}

// offsetClock is the system clock moved forward on demand, so leases can
// expire without waiting.
type offsetClock struct{ off atomic.Int64 }

func (c *offsetClock) Now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

type evictionResult struct {
	evicted   int
	took      time.Duration
	maxDuring time.Duration
}

// evictionStall times heartbeats to a small app while an eviction run
// removes c.evicted leases of a c.evictApp-instance app.
func evictionStall(c scaleConfig) (*evictionResult, error) {
	clock := &offsetClock{}
	b, err := startServer(registry.Config{Clock: clock, DisableSelfPreservation: true, RenewalPercentThreshold: 0.85})
	if err != nil {
		return nil, err
	}
	defer b.stop()
	b.populate(c.evictApp, c.evictApp) // one app: SERVICE-0
	small := make([]*eureka.InstanceInfo, 100)
	for k := range small {
		small[k] = fixture.SampleInstance(1_000_000 + k)
		small[k].App = "SMALL"
		b.store.Register(small[k], false)
	}
	// Every lease but c.evicted of the big app is renewed past the expiry.
	clock.off.Store(int64(91 * time.Second))
	for k := c.evicted; k < c.evictApp; k++ {
		b.store.Renew("SERVICE-0", fixture.SampleInstance(k).InstanceID, registry.RenewRequest{})
	}
	for _, i := range small {
		b.store.Renew("SMALL", i.InstanceID, registry.RenewRequest{})
	}
	var stop atomic.Bool
	type sample struct {
		at   time.Time
		took time.Duration
	}
	samples := make([][]sample, 8)
	var wg sync.WaitGroup
	for w := range samples {
		wg.Add(1)
		go func() {
			defer wg.Done()
			uri := func(n int) string { return "http://" + b.addr + "/eureka/apps/SMALL/" + small[n%len(small)].InstanceID }
			timedHeartbeats(b.addr, &stop, w, len(samples), uri, func(at time.Time, took time.Duration) {
				samples[w] = append(samples[w], sample{at, took})
			})
		}()
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	evicted := b.store.Evict()
	took := time.Since(start)
	time.Sleep(200 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	res := &evictionResult{evicted: len(evicted), took: took}
	for _, list := range samples {
		for _, s := range list {
			if s.at.Add(s.took).After(start) && s.at.Before(start.Add(took)) {
				res.maxDuring = max(res.maxDuring, s.took)
			}
		}
	}
	return res, nil
}

// timedHeartbeats sends heartbeats, PUT uri(n) for n = first, first+step,
// ..., one at a time over one connection to addr until stop is set or a
// request fails, and calls record with each one's start and time taken.
func timedHeartbeats(addr string, stop *atomic.Bool, first, step int, uri func(n int) string, record func(start time.Time, took time.Duration)) {
	client := &fasthttp.HostClient{Addr: addr}
	defer client.CloseIdleConnections()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	for n := first; !stop.Load(); n += step {
		req.Reset()
		req.Header.SetMethod("PUT")
		req.SetRequestURI(uri(n))
		start := time.Now()
		if err := client.Do(req, resp); err != nil {
			return
		}
		record(start, time.Since(start))
	}
}

type churnResult struct {
	changes, heartbeats, fetches, fetchMB, cores float64
	p50, p99, max                                time.Duration
}

// churn runs heartbeats, c.churnRate status changes per second and gzip
// full fetches together on a c.churnSize registry.
func churn(c scaleConfig) (*churnResult, error) {
	b, err := startServer(registry.Config{})
	if err != nil {
		return nil, err
	}
	defer b.stop()
	b.populate(c.churnSize, max(1, c.churnSize/1000))
	ids := make([][2]string, c.churnSize)
	for k := range ids {
		ids[k] = [2]string{"SERVICE-" + strconv.Itoa(k/max(1, c.churnSize/1000)), fixture.SampleInstance(k).InstanceID}
	}
	b.store.Documents().Full(eureka.FormatJSON).Gzip()

	var stop atomic.Bool
	var wg sync.WaitGroup
	var changes, fetches atomic.Int64
	var fetchBytes atomic.Int64
	// Churn: status changes at a fixed rate, sent by four workers so a slow
	// answer does not lower the rate.
	work := make(chan int, c.churnRate)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &fasthttp.HostClient{Addr: b.addr}
			defer client.CloseIdleConnections()
			statuses := []string{"OUT_OF_SERVICE", "UP"}
			for n := range work {
				id := ids[(n/2*7919)%len(ids)]
				req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				req.Header.SetMethod("PUT")
				req.SetRequestURI("http://" + b.addr + "/eureka/apps/" + id[0] + "/" + id[1] + "/status?value=" + statuses[n%2])
				if client.Do(req, resp) == nil && resp.StatusCode() == 200 {
					changes.Add(1)
				}
				fasthttp.ReleaseRequest(req)
				fasthttp.ReleaseResponse(resp)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(work)
		tick := time.NewTicker(time.Second / time.Duration(c.churnRate))
		defer tick.Stop()
		for n := 0; !stop.Load(); n++ {
			<-tick.C
			select {
			case work <- n:
			default: // the workers are behind: the rate achieved is reported
			}
		}
	}()
	// Full fetches at 10 per second per core, as the target asks, from two
	// clients; the rate achieved is reported.
	fetchEvery := time.Duration(float64(2*time.Second) / float64(10*runtime.NumCPU()))
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &fasthttp.HostClient{Addr: b.addr, ReadTimeout: time.Minute, MaxResponseBodySize: 1 << 30}
			defer client.CloseIdleConnections()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for next := time.Now(); !stop.Load(); next = next.Add(fetchEvery) {
				time.Sleep(time.Until(next))
				req.Reset()
				req.SetRequestURI("http://" + b.addr + "/eureka/apps/")
				req.Header.Set("Accept", "application/json")
				req.Header.Set("Accept-Encoding", "gzip")
				if err := client.Do(req, resp); err != nil || resp.StatusCode() != 200 {
					return
				}
				fetches.Add(1)
				fetchBytes.Add(int64(len(resp.Body())))
			}
		}()
	}
	lat := make([][]time.Duration, c.heartbeatCon)
	for w := range lat {
		wg.Add(1)
		go func() {
			defer wg.Done()
			uri := func(n int) string {
				id := ids[(n*104729)%len(ids)]
				return "http://" + b.addr + "/eureka/apps/" + id[0] + "/" + id[1]
			}
			timedHeartbeats(b.addr, &stop, w, len(lat), uri, func(_ time.Time, took time.Duration) {
				lat[w] = append(lat[w], took)
			})
		}()
	}
	cpu0, wall0 := cpuTime(), time.Now()
	time.Sleep(c.d)
	stop.Store(true)
	cpu, wall := cpuTime()-cpu0, time.Since(wall0)
	wg.Wait()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return nil, fmt.Errorf("no heartbeat completed under churn")
	}
	res := &churnResult{
		changes: float64(changes.Load()) / wall.Seconds(), heartbeats: float64(len(all)) / wall.Seconds(),
		fetches: float64(fetches.Load()) / wall.Seconds(), cores: cpu.Seconds() / wall.Seconds(),
		p50: all[len(all)/2], p99: all[len(all)*99/100], max: all[len(all)-1],
	}
	if f := fetches.Load(); f > 0 {
		res.fetchMB = float64(fetchBytes.Load()) / float64(f) / 1e6
	}
	return res, nil
}

type slowResult struct {
	idle, during, after uint64
	docMB               float64
}

// slowReaders opens c.slowConns connections that each ask for the full
// registry in XML and read it slowly, and measures the heap meanwhile.
func slowReaders(c scaleConfig) (*slowResult, error) {
	b, err := startServer(registry.Config{})
	if err != nil {
		return nil, err
	}
	defer b.stop()
	b.populate(c.slowSize, 20)
	res := &slowResult{docMB: float64(b.store.Documents().Full(eureka.FormatXML).Len()) / 1e6}
	res.idle = heapInUse()
	var conns []net.Conn
	defer func() {
		for _, conn := range conns {
			conn.Close()
		}
	}()
	for range c.slowConns {
		conn, err := net.Dial("tcp", b.addr)
		if err != nil {
			return nil, err
		}
		conns = append(conns, conn)
		fmt.Fprintf(conn, "GET /eureka/apps/ HTTP/1.1\r\nHost: localhost\r\nAccept: application/xml\r\n\r\n")
	}
	// Each reads 4 KB every 20 ms: the server is left holding whatever it
	// keeps per connection.
	var wg sync.WaitGroup
	var stop atomic.Bool
	for _, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := bufio.NewReaderSize(conn, 4096)
			buf := make([]byte, 4096)
			for !stop.Load() {
				if _, err := r.Read(buf); err != nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	time.Sleep(max(c.d/2, time.Second))
	res.during = heapInUse()
	stop.Store(true)
	for _, conn := range conns {
		conn.Close()
	}
	conns = nil
	wg.Wait()
	time.Sleep(200 * time.Millisecond) // the server notices the closed connections
	res.after = heapInUse()
	return res, nil
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

type vipResult struct{ base, during, queries float64 }

// vipLookups compares heartbeat throughput alone and while 8 clients ask
// for distinct VIP names, half of them never asked before.
func vipLookups(c scaleConfig) (*vipResult, error) {
	b, err := startServer(registry.Config{})
	if err != nil {
		return nil, err
	}
	defer b.stop()
	b.populate(c.vipSize, 20)
	ids := make([][2]string, c.vipSize)
	for k := range ids {
		ids[k] = [2]string{"SERVICE-" + strconv.Itoa(k/20), fixture.SampleInstance(k).InstanceID}
	}
	heartbeat := func(n int, req *fasthttp.Request) {
		id := ids[(n*104729)%len(ids)]
		req.Header.SetMethod("PUT")
		req.SetRequestURI("/eureka/apps/" + id[0] + "/" + id[1])
	}
	heartbeats := loadSpec{addr: b.addr, conc: c.heartbeatCon, d: c.d, build: heartbeat}
	base, err := heartbeats.rate()
	if err != nil {
		return nil, err
	}
	var stop atomic.Bool
	var queries atomic.Int64
	var wg sync.WaitGroup
	var fresh atomic.Int64
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &fasthttp.HostClient{Addr: b.addr, MaxResponseBodySize: 1 << 30}
			defer client.CloseIdleConnections()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for n := w; !stop.Load(); n += 8 {
				name := "service-" + strconv.Itoa(n%(c.vipNames/2))
				if n%2 == 1 {
					name = "unseen-" + strconv.FormatInt(fresh.Add(1), 10)
				}
				req.Reset()
				req.SetRequestURI("http://" + b.addr + "/eureka/vips/" + name)
				req.Header.Set("Accept", "application/json")
				if client.Do(req, resp) != nil {
					return
				}
				queries.Add(1)
			}
		}()
	}
	start := time.Now()
	during, err := heartbeats.rate()
	stop.Store(true)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return &vipResult{base: base, during: during, queries: float64(queries.Load()) / time.Since(start).Seconds()}, nil
}

// memoryPerInstance registers n instances, builds the full registry in
// both formats and both encodings, and returns the resident memory and
// the heap each instance added.
func memoryPerInstance(n int) (rss, heap float64) {
	debug.FreeOSMemory()
	rss0, heap0 := residentBytes(), heapInUse()
	s := registry.New(registry.Config{})
	for k := range n {
		if err := s.Register(fixture.SampleInstance(k), false); err != nil {
			panic(err)
		}
	}
	for _, f := range []eureka.Format{eureka.FormatJSON, eureka.FormatXML} {
		s.Documents().Full(f).Gzip()
	}
	heap1 := heapInUse()
	rss1 := residentBytes()
	runtime.KeepAlive(s)
	return float64(rss1-rss0) / float64(n), float64(heap1-heap0) / float64(n)
}
