package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// The summary, eurekabench without a command: see the package doc.

// summaryConfig sizes the summary.
type summaryConfig struct {
	d             time.Duration // each load phase
	conc          int           // requests in flight
	instances     int           // registry size for the full fetches and replication
	heapInstances int           // registry size for the heap measurement
}

var defaultSummary = summaryConfig{d: 5 * time.Second, conc: 64, instances: 10000, heapInstances: 100000}

func summaryCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	c := defaultSummary
	fs.DurationVar(&c.d, "duration", c.d, "how long each load phase runs")
	fs.IntVar(&c.conc, "concurrency", c.conc, "concurrent requests in flight")
	fs.IntVar(&c.instances, "instances", c.instances, "registry size for the full-fetch phase")
	fs.IntVar(&c.heapInstances, "heap-instances", c.heapInstances, "registry size for the heap measurement")
	return func(out io.Writer, rec *record) error { return runSummary(c, out, rec) }
}

// runSummary runs the summary's phases, each read by the meter into rec
// (the servers run in this process: their CPU is the load's), and
// prints its table; the table's figures go to rec too.
func runSummary(c summaryConfig, out io.Writer, rec *record) error {
	d, conc, instances := c.d, c.conc, c.instances
	m := meter{rec: rec}
	fmt.Fprintf(out, "eurekabench: %d CPUs (GOMAXPROCS %d), %s per phase, %d concurrent requests\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), d, conc)

	// First, while the heap holds nothing else that a collection could free
	// during the measurement.
	end := m.phase("heap per instance")
	heap := heapPerInstance(c.heapInstances)
	end()

	ceilingAddr, stopCeiling, err := startCeiling()
	if err != nil {
		return err
	}
	defer stopCeiling()

	store := registry.New(registry.Config{})
	srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		return err
	}
	defer srv.Stop(context.Background())
	addr := srv.Addr().String()

	// Registrations, through the REST API.
	end = m.phase("registrations")
	regRate, err := loadSpec{addr: addr, conc: conc, total: instances, want: fasthttp.StatusNoContent, build: func(n int, req *fasthttp.Request) {
		i := fixture.SampleInstance(n)
		req.Header.SetMethod("POST")
		req.SetRequestURI("/eureka/apps/" + i.App)
		req.Header.SetContentType("application/json")
		req.SetBody(eureka.AppendInstanceJSON(nil, i))
	}}.rate()
	end()
	if err != nil {
		return err
	}
	if store.Len() != instances {
		return fmt.Errorf("registered %d of %d instances", store.Len(), instances)
	}

	renewPaths := make([]string, instances)
	for n := range renewPaths {
		i := fixture.SampleInstance(n)
		renewPaths[n] = "/eureka/apps/" + i.App + "/" + i.InstanceID + "?status=UP&lastDirtyTimestamp=" + strconv.FormatInt(i.LastDirtyTimestamp, 10)
	}
	renew := func(n int, req *fasthttp.Request) {
		req.Header.SetMethod("PUT")
		req.SetRequestURI(renewPaths[n%len(renewPaths)])
		req.Header.Set("Accept", "application/json")
	}
	end = m.phase("heartbeats, bare fasthttp 200 (ceiling)")
	ceilingRate, err := loadSpec{addr: ceilingAddr, conc: conc, d: d, build: renew}.rate()
	end()
	if err != nil {
		return err
	}
	end = m.phase("heartbeats")
	renewRate, err := loadSpec{addr: addr, conc: conc, d: d, build: renew}.rate()
	end()
	if err != nil {
		return err
	}

	// Read once plain, as the fetches below read it: the registry is then
	// built again with its plain form kept (Store.keepPlain), and served
	// as it is from there on.
	payload := len(store.Documents().Full(eureka.FormatJSON).Bytes())
	store.Documents().Full(eureka.FormatJSON)
	builds := store.Documents().Builds()
	end = m.phase("full fetches")
	fetchRate, err := loadSpec{addr: addr, conc: min(conc, 8), d: d, build: func(_ int, req *fasthttp.Request) {
		req.SetRequestURI("/eureka/apps/")
		req.Header.Set("Accept", "application/json")
	}}.rate()
	end()
	if err != nil {
		return err
	}
	rebuilt := store.Documents().Builds() - builds

	end = m.phase("the Caddy gateway")
	gw, err := benchGateway(d, conc)
	end()
	if err != nil {
		return err
	}
	end = m.phase("replication")
	repl, err := benchReplication(instances)
	end()
	if err != nil {
		return err
	}
	for _, f := range []figure{
		{"heartbeats.ceiling", ceilingRate, "/s"}, {"heartbeats.rate", renewRate, "/s"},
		{"registrations.rate", regRate, "/s"}, {"full.instances", float64(instances), ""},
		{"full.bytes", float64(payload), "B"}, {"full.rate", fetchRate, "/s"}, {"full.serializations", float64(rebuilt), ""},
		{"heap.instances", float64(c.heapInstances), ""}, {"heap.per_instance", heap, "B"},
		{"gateway.static", gw.static, "/s"}, {"gateway.eureka", gw.dynamic, "/s"}, {"gateway.routable_after", float64(gw.routableAt), ""},
		{"replication.instances", float64(repl.instances), ""}, {"replication.seconds", repl.converged.Seconds(), "s"},
		{"replication.batches", float64(repl.batches), ""},
	} {
		rec.add(f.Name, f.Value, f.Unit)
	}

	fmt.Fprintf(out, "%-44s %12s\n", "measurement", "result")
	fmt.Fprintf(out, "%-44s %12.0f /s\n", "heartbeats, bare fasthttp 200 (ceiling)", ceilingRate)
	fmt.Fprintf(out, "%-44s %12.0f /s\n", "heartbeats, eurekagate", renewRate)
	fmt.Fprintf(out, "%-44s %12.0f %%   (target >= 70 %%)\n", "heartbeats, share of ceiling", 100*renewRate/ceilingRate)
	fmt.Fprintf(out, "%-44s %12.0f /s\n", "registrations", regRate)
	fmt.Fprintf(out, "%-44s %12.0f /s   (%d instances, %.1f MB JSON)\n", "full fetches", fetchRate, instances, float64(payload)/1e6)
	fmt.Fprintf(out, "%-44s %12d      (target 0)\n", "registry serializations during full fetches", rebuilt)
	fmt.Fprintf(out, "%-44s %12.0f B   (%d instances, target <= 4096)\n", "heap per registered instance", heap, c.heapInstances)
	fmt.Fprintf(out, "%-44s %12.0f /s\n", "requests, Caddy reverse_proxy static upstream", gw.static)
	fmt.Fprintf(out, "%-44s %12.0f /s\n", "requests, Caddy eureka_gateway", gw.dynamic)
	fmt.Fprintf(out, "%-44s %12.2f      (target >= 0.90)\n", "gateway, share of static", gw.dynamic/gw.static)
	fmt.Fprintf(out, "%-44s %12d      (target 1: the next request)\n", "requests until a registration is routable", gw.routableAt)
	fmt.Fprintf(out, "%-44s %12.2f s   (%d registrations on node 1 of 3)\n", "replication, until all nodes agree", repl.converged.Seconds(), repl.instances)
	fmt.Fprintf(out, "%-44s %12.0f /s   (%d batches to 2 peers)\n", "replication batches", float64(repl.batches)/repl.converged.Seconds(), repl.batches)
	return nil
}

// startCeiling runs a fasthttp server that answers every request 200 with
// an empty body.
func startCeiling() (string, func(), error) {
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {}}
	ln, err := newLoopbackListener()
	if err != nil {
		return "", nil, err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); srv.Serve(ln) }()
	return ln.Addr().String(), func() { srv.Shutdown(); wg.Wait() }, nil
}

func heapPerInstance(n int) float64 {
	var before, after runtime.MemStats
	// Two collections empty the sync.Pools the load phases filled, which
	// would otherwise be freed during the measurement and hide its cost.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := registry.New(registry.Config{})
	for i := range n {
		if err := s.Register(fixture.SampleInstance(i), false); err != nil {
			panic(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// gatewayResult is what the gateway phase measured.
type gatewayResult struct {
	static, dynamic float64 // requests per second
	routableAt      int     // requests after registration until the first 200
}

// benchGateway runs Caddy in this process with three loopback sites: the
// registry (eureka_server), the gateway (eureka_gateway) and a plain
// reverse_proxy with a static upstream. Both proxies front the same
// fasthttp backend; the load goes through each in turn.
func benchGateway(d time.Duration, conc int) (*gatewayResult, error) {
	backendLn, err := newLoopbackListener()
	if err != nil {
		return nil, err
	}
	backend := &fasthttp.Server{Handler: answerOK}
	go backend.Serve(backendLn)
	defer backend.Shutdown()
	backendAddr := backendLn.Addr().String()

	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	regAddr, gwAddr, staticAddr := "127.0.0.1:"+ports[0], "127.0.0.1:"+ports[1], "127.0.0.1:"+ports[2]
	stop, err := runCaddy(
		caddyServer{"registry", regAddr, eurekaServerHandler},
		caddyServer{"gateway", gwAddr, eurekaGatewayHandler},
		caddyServer{"static", staticAddr, staticProxyHandler(backendAddr, "")},
	)
	if err != nil {
		return nil, err
	}
	defer stop()

	// Register the backend and count the requests until it is routable.
	if err := registerBackend(regAddr, backendAddr); err != nil {
		return nil, err
	}
	res := &gatewayResult{}
	for res.routableAt = 1; res.routableAt <= 100; res.routableAt++ {
		if status, err := request(gwAddr, "GET", "/svc/x", nil); err == nil && status == 200 {
			break
		}
	}

	get := func(path string) func(int, *fasthttp.Request) {
		return func(_ int, req *fasthttp.Request) { req.SetRequestURI(path) }
	}
	if res.static, err = (loadSpec{addr: staticAddr, conc: conc, d: d, build: get("/x")}).rate(); err != nil {
		return nil, fmt.Errorf("static upstream: %v", err)
	}
	if res.dynamic, err = (loadSpec{addr: gwAddr, conc: conc, d: d, build: get("/svc/x")}).rate(); err != nil {
		return nil, fmt.Errorf("gateway: %v", err)
	}
	return res, nil
}

// replicationResult is what the replication phase measured.
type replicationResult struct {
	instances int
	converged time.Duration // from the first registration until all nodes agree
	batches   uint64        // batches sent by node 1, to both peers
}

// benchReplication runs three registry nodes on loopback, registers n
// instances on node 1 and measures how long until nodes 2 and 3 hold them
// all.
func benchReplication(n int) (*replicationResult, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	var urls []string
	for _, p := range ports {
		urls = append(urls, "http://127.0.0.1:"+p+"/eureka/")
	}
	type node struct {
		store *registry.Store
		peers *replication.Peers
		srv   *httpapi.Server
	}
	var nodes []*node
	defer func() {
		for _, nd := range nodes {
			nd.peers.Stop()
			nd.srv.Stop(context.Background())
		}
	}()
	for k, p := range ports {
		store := registry.New(registry.Config{})
		peers, err := replication.New(store, replication.Config{Peers: urls, Self: urls[k]})
		if err != nil {
			return nil, err
		}
		srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: "127.0.0.1:" + p})
		if err := srv.Start(); err != nil {
			return nil, err
		}
		peers.Start()
		nodes = append(nodes, &node{store, peers, srv})
	}
	start := time.Now()
	for i := range n {
		if err := nodes[0].store.Register(fixture.SampleInstance(i), false); err != nil {
			return nil, err
		}
	}
	deadline := start.Add(2 * time.Minute)
	for nodes[1].store.Len() < n || nodes[2].store.Len() < n {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("replication did not converge: %d and %d of %d", nodes[1].store.Len(), nodes[2].store.Len(), n)
		}
		time.Sleep(time.Millisecond)
	}
	res := &replicationResult{instances: n, converged: time.Since(start)}
	for _, ps := range nodes[0].peers.Stats() {
		res.batches += ps.BatchesSent
	}
	return res, nil
}
