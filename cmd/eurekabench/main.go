// Command eurekabench measures the registry server over loopback and prints,
// in one run:
//
//   - heartbeats (PUT apps/{app}/{id}) per second against our fasthttp server,
//     beside a bare fasthttp server that answers every request 200 with an
//     empty body: the ceiling for this machine and load generator;
//   - registrations per second;
//   - full fetches (GET apps, JSON) per second at -instances instances, and
//     how many times the registry was serialized while they ran;
//   - heap per registered instance at 100,000 instances;
//   - requests per second through the Caddy gateway (eureka_gateway, with
//     the eureka upstream source), beside the same Caddy proxying to the
//     same backend through a static upstream, and how many requests after
//     a registration the new instance takes to become routable;
//   - registrations on one node of a three-node cluster, replicated to the
//     other two: the time until all three agree, and the batches sent.
//
// Both servers and the load generator share the machine, so the figures
// are comparable with each other, not with other machines.
//
//	go run ./cmd/eurekabench -duration 5s
//
// With a subcommand it runs one study instead:
//
//	go run ./cmd/eurekabench scale    # cost per change at scale: big apps, eviction, churn, slow readers, VIPs, memory
//	go run ./cmd/eurekabench push     # how fast a change reaches watching clients, and what a fleet of them costs
//	go run ./cmd/eurekabench fetch    # a full fetch of 10,000 instances by discovery.Client and by hudl/fargo
//	go run ./cmd/eurekabench authflood # authenticated heartbeats while one client floods wrong passwords
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "authflood" {
		os.Exit(authFloodMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "push-server" {
		if err := pushServer(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "eurekabench push-server:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "push" {
		fs := flag.NewFlagSet("push", flag.ExitOnError)
		c := defaultPush
		fs.DurationVar(&c.d, "duration", c.d, "how long each fleet phase runs")
		fs.IntVar(&c.clients, "clients", c.clients, "watching clients of a few apps each")
		fs.IntVar(&c.whole, "whole-clients", c.whole, "whole-registry watching clients")
		fs.IntVar(&c.rate, "rate", c.rate, "changes per second")
		fs.IntVar(&c.trials, "trials", c.trials, "write-to-visible trials per kind")
		fs.Parse(os.Args[2:])
		if err := runPush(c, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "eurekabench push:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "gateway" {
		os.Exit(gatewayCommand(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "scale" {
		fs := flag.NewFlagSet("scale", flag.ExitOnError)
		d := fs.Duration("duration", defaultScale.d, "how long each timed phase runs")
		only := fs.String("only", "", "run only this phase: register, evict, churn, slow, vip or memory")
		cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
		fs.Parse(os.Args[2:])
		c := defaultScale
		c.d, c.only = *d, *only
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				fmt.Fprintln(os.Stderr, "eurekabench scale:", err)
				os.Exit(1)
			}
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
		if err := runScale(c, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "eurekabench scale:", err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "fetch" {
		if err := runFetch(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "eurekabench fetch:", err)
			os.Exit(1)
		}
		return
	}
	duration := flag.Duration("duration", 5*time.Second, "how long each load phase runs")
	conc := flag.Int("concurrency", 64, "concurrent requests in flight")
	instances := flag.Int("instances", 10000, "registry size for the full-fetch phase")
	heapInstances := flag.Int("heap-instances", 100000, "registry size for the heap measurement")
	flag.Parse()
	if err := run(*duration, *conc, *instances, *heapInstances); err != nil {
		fmt.Fprintln(os.Stderr, "eurekabench:", err)
		os.Exit(1)
	}
}

func run(d time.Duration, conc, instances, heapInstances int) error {
	fmt.Printf("eurekabench: %d CPUs (GOMAXPROCS %d), %s per phase, %d concurrent requests\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), d, conc)

	// First, while the heap holds nothing else that a collection could free
	// during the measurement.
	heap := heapPerInstance(heapInstances)

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
	regRate, err := load(addr, conc, 0, instances, func(n int, req *fasthttp.Request) {
		i := testkit.SampleInstance(n)
		req.Header.SetMethod("POST")
		req.SetRequestURI("/eureka/apps/" + i.App)
		req.Header.SetContentType("application/json")
		req.SetBody(eureka.AppendInstanceJSON(nil, i))
	}, fasthttp.StatusNoContent)
	if err != nil {
		return err
	}
	if store.Len() != instances {
		return fmt.Errorf("registered %d of %d instances", store.Len(), instances)
	}

	renewPaths := make([]string, instances)
	for n := range renewPaths {
		i := testkit.SampleInstance(n)
		renewPaths[n] = "/eureka/apps/" + i.App + "/" + i.InstanceID + "?status=UP&lastDirtyTimestamp=" + strconv.FormatInt(i.LastDirtyTimestamp, 10)
	}
	renew := func(n int, req *fasthttp.Request) {
		req.Header.SetMethod("PUT")
		req.SetRequestURI(renewPaths[n%len(renewPaths)])
		req.Header.Set("Accept", "application/json")
	}
	ceilingRate, err := load(ceilingAddr, conc, d, 0, renew, fasthttp.StatusOK)
	if err != nil {
		return err
	}
	renewRate, err := load(addr, conc, d, 0, renew, fasthttp.StatusOK)
	if err != nil {
		return err
	}

	store.FullPayload(eureka.FormatJSON) // build once, then serve
	builds := store.FullPayloadBuilds()
	payload := len(store.FullPayload(eureka.FormatJSON).Bytes())
	fetchRate, err := load(addr, min(conc, 8), d, 0, func(_ int, req *fasthttp.Request) {
		req.SetRequestURI("/eureka/apps/")
		req.Header.Set("Accept", "application/json")
	}, fasthttp.StatusOK)
	if err != nil {
		return err
	}
	rebuilt := store.FullPayloadBuilds() - builds

	gw, err := benchGateway(d, conc)
	if err != nil {
		return err
	}
	repl, err := benchReplication(instances)
	if err != nil {
		return err
	}

	fmt.Printf("%-44s %12s\n", "measurement", "result")
	fmt.Printf("%-44s %12.0f /s\n", "heartbeats, bare fasthttp 200 (ceiling)", ceilingRate)
	fmt.Printf("%-44s %12.0f /s\n", "heartbeats, eurekagate", renewRate)
	fmt.Printf("%-44s %12.0f %%   (target >= 70 %%)\n", "heartbeats, share of ceiling", 100*renewRate/ceilingRate)
	fmt.Printf("%-44s %12.0f /s\n", "registrations", regRate)
	fmt.Printf("%-44s %12.0f /s   (%d instances, %.1f MB JSON)\n", "full fetches", fetchRate, instances, float64(payload)/1e6)
	fmt.Printf("%-44s %12d      (target 0)\n", "registry serializations during full fetches", rebuilt)
	fmt.Printf("%-44s %12.0f B   (%d instances, target <= 4096)\n", "heap per registered instance", heap, heapInstances)
	fmt.Printf("%-44s %12.0f /s\n", "requests, Caddy reverse_proxy static upstream", gw.static)
	fmt.Printf("%-44s %12.0f /s\n", "requests, Caddy eureka_gateway", gw.dynamic)
	fmt.Printf("%-44s %12.2f      (target >= 0.90)\n", "gateway, share of static", gw.dynamic/gw.static)
	fmt.Printf("%-44s %12d      (target 1: the next request)\n", "requests until a registration is routable", gw.routableAt)
	fmt.Printf("%-44s %12.2f s   (%d registrations on node 1 of 3)\n", "replication, until all nodes agree", repl.converged.Seconds(), repl.instances)
	fmt.Printf("%-44s %12.0f /s   (%d batches to 2 peers)\n", "replication batches", float64(repl.batches)/repl.converged.Seconds(), repl.batches)
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

// load sends requests from conc workers, either for d or, when d is 0, for
// exactly total requests, and returns the rate of answers with the wanted
// status. Any other answer is an error.
func load(addr string, conc int, d time.Duration, total int, build func(n int, req *fasthttp.Request), want int) (float64, error) {
	client := &fasthttp.HostClient{Addr: addr, MaxConns: conc, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	var next, done atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for {
				n := int(next.Add(1) - 1)
				if (d == 0 && n >= total) || (d > 0 && time.Now().After(deadline)) || firstErr.Load() != nil {
					return
				}
				req.Reset()
				build(n, req)
				req.SetHost(addr)
				if err := client.Do(req, resp); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				if resp.StatusCode() != want {
					firstErr.CompareAndSwap(nil, fmt.Errorf("%s %s: status %d, want %d", req.Header.Method(), req.URI().Path(), resp.StatusCode(), want))
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, err
	}
	return float64(done.Load()) / time.Since(start).Seconds(), nil
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
		if err := s.Register(testkit.SampleInstance(i), false); err != nil {
			panic(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}
