package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/caddymodule"
	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/routing"
)

// The gateway study: requests per second to one tiny backend, directly,
// through nginx with a static upstream (when nginx is installed), through
// the gateway routing by name (event loops in front of fasthttp, the
// default), through Caddy's eureka_gateway and through Caddy's
// reverse_proxy with a static upstream (what routing by name costs in
// Caddy), and for reference through a bare fasthttp proxy (no routing, no
// header work: the ceiling of a proxy with a goroutine per connection) and
// the gateway without its loops; and the gateway again with 20 traffic
// rules on the app, the one that matches last (a weighted split with a
// sticky key), and the gateway with its traffic counters and request ids
// turned off, with its access log written to a file, and with a
// per-client rate limit that never triggers (what deciding one costs,
// target ≥ 0.95 of the gateway without), and with a per-client shared
// limit on a redis-server of its own, its lease warm (target ≥ 0.7;
// left out when redis-server is not installed); and the configuration users
// run, the gateway with every feature on (the 20 rules, the access log to
// a file, its metrics registered, traffic counters and request ids), beside
// the anchors: nginx with its access log buffered to a file and HAProxy
// (gateway_anchors.go), each comparison printed as
// "NAME: ours=X anchor=Y ratio=Z" with the CPU per request and the p99
// (wrk --latency; the median of a round's slices). The gateways
// all sent the same headers. Every server runs in a process of its
// own (this binary again, as "eurekabench gateway -serve <role>"), as it
// would in production; the load comes from wrk when it is installed (as
// the figures did), else from this process.
//
// The targets take turns in one-second slices, so that whatever else the
// machine runs weighs on each alike, and a round's rate for a target is
// its requests over its slices. Beside the rates it reports each proxy's
// CPU time per request (from /proc), which other load on the machine
// moves far less than it moves the rates.
//
//	go run ./cmd/eurekabench gateway -duration 5s -rounds 3

// gatewayBenchConfig is the study's settings.
type gatewayBenchConfig struct {
	d, warmup time.Duration
	conns     int
	rounds    int
	wrk       string // path of wrk, "" for the in-process load
	nginx     string // path of nginx, "" to leave it out
	haproxy   string // path of haproxy, "" to leave it out
	servers   rerun  // runs each server's process
	profile   string // the gateway's CPU profile, "" for none
	profiled  string // the role profiled: fasthttp (bare) or fasthttp-all
	anchors   bool   // only the anchors, the two gateways they compare with and Caddy's with every feature on
	redis     string // the shared limit's Redis, "" to leave it out
}

// gatewayCommand is "eurekabench gateway", and with -serve the process of
// one of its servers.
func gatewayCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	d := fs.Duration("duration", 5*time.Second, "how long each measurement runs")
	conns := fs.Int("connections", 32, "connections the load keeps busy")
	rounds := fs.Int("rounds", 3, "how many times each target is measured, in turn")
	useWrk := fs.Bool("wrk", true, "load with wrk -t1 when it is installed (else in-process)")
	useNginx := fs.Bool("nginx", true, "include nginx when it is installed")
	useHAProxy := fs.Bool("haproxy", true, "include HAProxy when it is installed")
	serve := fs.String("serve", "", "internal: serve one role (backend, fasthttp, caddy) until interrupted")
	listen := fs.String("listen", "", "internal: the role's listen address")
	backend := fs.String("backend", "", "internal: the backend's address")
	redisURL := fs.String("redis", "", "internal: the shared limit's Redis")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the gateway's process to this file")
	profiled := fs.String("cpuprofile-target", "bare", "the gateway -cpuprofile profiles: bare or every-feature")
	anchors := fs.Bool("anchors", false, "measure only the backend, nginx, HAProxy, the gateway bare and with every feature on, and Caddy's eureka_gateway with every feature on (beside it through reverse_proxy and Caddy's static reverse_proxy)")
	return func(out io.Writer, rec *record) error {
		if *serve != "" {
			return serveRole(*serve, *listen, *backend, *profile, *redisURL, out)
		}
		servers, err := thisBinary()
		if err != nil {
			return err
		}
		c := gatewayBenchConfig{d: *d, warmup: min(*d/4, time.Second), conns: *conns, rounds: *rounds, servers: servers, anchors: *anchors}
		switch *profiled {
		case "bare":
			c.profiled = "fasthttp"
		case "every-feature":
			c.profiled = "fasthttp-all"
		default:
			return fmt.Errorf("-cpuprofile-target: %q is neither bare nor every-feature", *profiled)
		}
		if *profile != "" {
			if c.profile, err = filepath.Abs(*profile); err != nil {
				return err
			}
		}
		if *useWrk {
			c.wrk, _ = exec.LookPath("wrk")
		}
		if *useNginx {
			c.nginx, _ = exec.LookPath("nginx")
		}
		if *useHAProxy {
			c.haproxy, _ = exec.LookPath("haproxy")
		}
		return runGatewayBench(c, out, rec)
	}
}

// target is one way to the backend.
type target struct {
	name, addr, path string
	headers          [][2]string  // sent with every request
	pids             func() []int // the proxy's processes, nil for none
	rates            []float64    // per round
	cpu              []float64    // the proxy's CPU seconds per request, per round
	sys              []float64    // of which in the kernel (system time), per round
	p99              []float64    // the median of the round's slices' p99 latencies, seconds

	// the current round's sums, and its slices' p99s
	requests, seconds, cpuSeconds, sysSeconds float64
	sliceP99                                  []float64
}

// runGatewayBench measures the targets in rounds, printing each round and
// the ranges, and records each target's rate and proxy CPU per round
// (<target>.rate.<round>, <target>.cpu.<round>) and each round as a
// phase.
func runGatewayBench(c gatewayBenchConfig, out io.Writer, rec *record) error {
	loader := "in-process fasthttp client"
	if c.wrk != "" {
		loader = "wrk -t1"
	}
	fmt.Fprintf(out, "eurekabench gateway: %d CPUs, %d connections, %s per measurement, %d rounds, load from %s\n",
		runtime.NumCPU(), c.conns, c.d, c.rounds, loader)

	var stops []func()
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}()
	ports, err := freePorts(15)
	if err != nil {
		return err
	}
	redisURL, stopRedis, err := startBenchRedis()
	if err != nil {
		return fmt.Errorf("starting redis-server: %v", err)
	}
	stops, c.redis = append(stops, stopRedis), redisURL
	addr := func(i int) string { return "127.0.0.1:" + ports[i] }
	backendAddr := addr(0)
	pids := map[string]int{}
	for _, role := range []struct{ name, listen string }{
		{"backend", backendAddr}, {"fasthttp", addr(1)}, {"caddy", addr(2)}, {"bare", addr(4)}, {"fasthttp-only", addr(5)},
		{"caddy-static", addr(6)}, {"fasthttp-rules", addr(7)}, {"fasthttp-quiet", addr(8)},
		{"fasthttp-log", addr(9)}, {"fasthttp-limit", addr(10)}, {"fasthttp-all", addr(11)}, {"fasthttp-shared", addr(14)},
	} {
		if role.name == "fasthttp-shared" && c.redis == "" {
			fmt.Fprintln(out, "redis-server is not installed: the shared limit's target is left out")
			continue
		}
		if c.anchors && role.name != "backend" && role.name != "fasthttp" && role.name != "fasthttp-all" {
			continue
		}
		stop, pid, err := c.startServer(role.name, role.listen, backendAddr)
		if err != nil {
			return fmt.Errorf("starting the %s: %v", role.name, err)
		}
		stops = append(stops, stop)
		pids[role.name] = pid
	}
	one := func(pid int) func() []int { return func() []int { return []int{pid} } }
	targets := []*target{{name: "direct to the backend", addr: backendAddr, path: "/x"}}
	var nginx, nginxLog, haproxy *target
	if c.nginx != "" {
		for _, n := range []struct {
			t   **target
			log bool
			at  string
			as  string
		}{{&nginx, false, addr(3), "nginx, static upstream"}, {&nginxLog, true, addr(12), "nginx, access log to a file"}} {
			stop, master, err := startNginx(c.nginx, n.at, backendAddr, n.log)
			if err != nil {
				return fmt.Errorf("starting %s: %v", n.as, err)
			}
			stops = append(stops, stop)
			*n.t = &target{name: n.as, addr: n.at, path: "/x",
				pids: func() []int { return append(childrenOf(master), master) }}
			targets = append(targets, *n.t)
		}
	}
	if c.haproxy != "" {
		stop, pid, err := startHAProxy(c.haproxy, addr(13), backendAddr)
		if err != nil {
			return fmt.Errorf("starting HAProxy: %v", err)
		}
		stops = append(stops, stop)
		haproxy = &target{name: "HAProxy, static upstream", addr: addr(13), path: "/x", pids: one(pid)}
		targets = append(targets, haproxy)
	}
	fast := &target{name: "gateway, by name", addr: addr(1), path: "/svc/x", pids: one(pids["fasthttp"]), headers: fixture.RuleHeaders}
	ruled := &target{name: "gateway, 20 traffic rules", addr: addr(7), path: "/svc/x", pids: one(pids["fasthttp-rules"]), headers: fixture.RuleHeaders}
	quiet := &target{name: "gateway, no metrics, no ids", addr: addr(8), path: "/svc/x", pids: one(pids["fasthttp-quiet"]), headers: fixture.RuleHeaders}
	logged := &target{name: "gateway, access log to a file", addr: addr(9), path: "/svc/x", pids: one(pids["fasthttp-log"]), headers: fixture.RuleHeaders}
	limited := &target{name: "gateway, a per-client limit", addr: addr(10), path: "/svc/x", pids: one(pids["fasthttp-limit"]), headers: fixture.RuleHeaders}
	every := &target{name: "gateway, every feature on", addr: addr(11), path: "/svc/x", pids: one(pids["fasthttp-all"]), headers: fixture.RuleHeaders}
	caddyGW := &target{name: "Caddy eureka_gateway, by name", addr: addr(2), path: "/svc/x", pids: one(pids["caddy"])}
	caddyStatic := &target{name: "Caddy reverse_proxy, static", addr: addr(6), path: "/svc/x", pids: one(pids["caddy-static"])}
	bare := &target{name: "bare fasthttp proxy (reference)", addr: addr(4), path: "/svc/x", pids: one(pids["bare"])}
	only := &target{name: "gateway without loops (reference)", addr: addr(5), path: "/svc/x", pids: one(pids["fasthttp-only"])}
	if c.anchors {
		targets = append(targets, fast, every)
	} else {
		targets = append(targets, fast, every, ruled, quiet, logged, limited, caddyGW, caddyStatic, bare, only)
	}
	var shared *target
	if c.redis != "" && !c.anchors {
		shared = &target{name: "gateway, a shared Redis limit", addr: addr(14), path: "/svc/x", pids: one(pids["fasthttp-shared"]), headers: fixture.RuleHeaders}
		targets = append(targets, shared)
	}
	full, err := c.startCaddyFull(backendAddr, &stops) // gatewaycaddy.go
	if err != nil {
		return err
	}
	targets = append(targets, full...)
	comparisons := gatewayComparisons(every, fast, nginx, nginxLog, haproxy)
	comparisons = append(comparisons, caddyComparisons(full, nginxLog, haproxy)...)
	for _, t := range targets {
		if status, err := request(t.addr, "GET", t.path, nil); err != nil || status != 200 {
			return fmt.Errorf("%s: GET %s: %d %v", t.name, t.path, status, err)
		}
	}

	slice := time.Second
	nSlices := max(1, int(c.d/slice))
	if c.d < slice {
		slice, nSlices = c.d, 1
	}
	for _, t := range targets { // warm up
		if _, _, _, err := c.measure(t, min(slice, c.warmup)); err != nil {
			return err
		}
	}
	for r := 1; r <= c.rounds; r++ {
		end := meter{rec: rec}.phase(fmt.Sprintf("round %d", r))
		fmt.Fprintf(out, "\nround %d (%d slices of %s each)\n", r, nSlices, slice)
		for _, t := range targets {
			t.requests, t.seconds, t.cpuSeconds, t.sysSeconds, t.sliceP99 = 0, 0, 0, 0, t.sliceP99[:0]
		}
		for range nSlices {
			for _, t := range targets {
				before, beforeSys := cpuAndSysSeconds(t.pids)
				n, secs, p99, err := c.measure(t, slice)
				if err != nil {
					return err
				}
				t.requests += n
				t.seconds += secs
				t.sliceP99 = append(t.sliceP99, p99)
				after, afterSys := cpuAndSysSeconds(t.pids)
				t.cpuSeconds += after - before
				t.sysSeconds += afterSys - beforeSys
			}
		}
		for _, t := range targets {
			rate := t.requests / t.seconds
			t.rates = append(t.rates, rate)
			cpu := ""
			if t.pids != nil && t.cpuSeconds > 0 {
				t.cpu = append(t.cpu, t.cpuSeconds/t.requests)
				t.sys = append(t.sys, t.sysSeconds/t.requests)
				cpu = fmt.Sprintf("   proxy CPU %5.1f µs/request (system %4.1f)", 1e6*t.cpuSeconds/t.requests, 1e6*t.sysSeconds/t.requests)
			}
			p99 := median(t.sliceP99)
			t.p99 = append(t.p99, p99)
			fmt.Fprintf(out, "  %-32s %9.0f req/s%s   p99 %.2f ms\n", t.name, rate, cpu, 1e3*p99)
			rec.add(fmt.Sprintf("%s.rate.%d", t.name, r), rate, "/s")
			rec.add(fmt.Sprintf("%s.p99.%d", t.name, r), 1e3*p99, "ms")
			if cpu != "" {
				rec.add(fmt.Sprintf("%s.cpu.%d", t.name, r), 1e6*t.cpuSeconds/t.requests, "µs")
				rec.add(fmt.Sprintf("%s.sys.%d", t.name, r), 1e6*t.sysSeconds/t.requests, "µs")
			}
		}
		end()
		last := func(t *target) float64 { return t.rates[len(t.rates)-1] }
		if !c.anchors {
			printStudyRound(out, last, studyTargets{targets[0], nginx, fast, ruled, quiet, logged, limited, caddyGW, caddyStatic, bare, only, shared})
		}
		for _, cmp := range comparisons {
			printComparison(out, cmp, r)
		}
	}

	fmt.Fprintf(out, "\nranges over %d rounds\n", c.rounds)
	for _, t := range targets {
		cpu := ""
		if len(t.cpu) > 0 {
			cpu = fmt.Sprintf("   proxy CPU %.1f - %.1f µs/request", 1e6*slices.Min(t.cpu), 1e6*slices.Max(t.cpu))
		}
		fmt.Fprintf(out, "  %-32s %9.0f - %.0f req/s%s\n", t.name, slices.Min(t.rates), slices.Max(t.rates), cpu)
	}
	ratios := func(a, b *target) (lo, hi float64) {
		lo, hi = 1e18, 0
		for i := range a.rates {
			r := a.rates[i] / b.rates[i]
			lo, hi = min(lo, r), max(hi, r)
		}
		return lo, hi
	}
	if !c.anchors {
		printStudyRanges(out, ratios, studyTargets{targets[0], nginx, fast, ruled, quiet, logged, limited, caddyGW, caddyStatic, bare, only, shared})
	}
	if len(comparisons) > 0 {
		fmt.Fprintf(out, "\nours against the anchors over %d rounds (requests/s summed, CPU µs/request and p99 ms their medians)\n", c.rounds)
		for _, cmp := range comparisons {
			printComparison(out, cmp, 0)
		}
	}
	return nil
}

// measure loads t for about d and returns how many requests were answered
// 200, in how long, and their p99 latency in seconds.
func (c gatewayBenchConfig) measure(t *target, d time.Duration) (requests, seconds, p99 float64, err error) {
	if c.wrk == "" {
		r, err := load(loadSpec{addr: t.addr, conc: c.conns, d: d, latencies: true, build: func(_ int, req *fasthttp.Request) {
			req.SetRequestURI(t.path)
			for _, h := range t.headers {
				req.Header.Set(h[0], h[1])
			}
		}})
		if err != nil {
			return 0, 0, 0, fmt.Errorf("%s: %v", t.name, err)
		}
		return float64(r.n), r.elapsed.Seconds(), r.p99().Seconds(), nil
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	args := []string{"-t1", "-c" + strconv.Itoa(c.conns), "-d" + strconv.Itoa(secs) + "s", "--latency"}
	for _, h := range t.headers {
		args = append(args, "-H", h[0]+": "+h[1])
	}
	outp, err := exec.Command(c.wrk, append(args, "http://"+t.addr+t.path)...).CombinedOutput()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s: wrk: %v\n%s", t.name, err, outp)
	}
	w, err := parseWrk(outp)
	switch {
	case err != nil:
		return 0, 0, 0, fmt.Errorf("%s: %v", t.name, err)
	case w.non2xx > 0:
		return 0, 0, 0, fmt.Errorf("%s: %d answers were not 200\n%s", t.name, w.non2xx, outp)
	case w.p99 <= 0:
		return 0, 0, 0, fmt.Errorf("%s: no p99 in wrk's output\n%s", t.name, outp)
	}
	return float64(w.requests), w.seconds, w.p99.Seconds(), nil
}

// startServer runs this binary serving role on listen, and returns when it
// answers there; stop interrupts it and waits for it.
func (c gatewayBenchConfig) startServer(role, listen, backend string) (stop func(), pid int, err error) {
	args := []string{"gateway", "-serve", role, "-listen", listen, "-backend", backend, "-redis", c.redis}
	if role == c.profiled && c.profile != "" {
		args = append(args, "-cpuprofile", c.profile)
	}
	server, err := c.servers.start(args...)
	if err != nil {
		return nil, 0, err
	}
	if server.line != "ready" {
		server.stop()
		return nil, 0, fmt.Errorf("said %q", server.line)
	}
	return server.stop, server.pid(), nil
}

// serveRole is the server's process: serve role on listen, say "ready" on
// out, and serve until interrupted.
func serveRole(role, listen, backend, profile, redisURL string, out io.Writer) error {
	ctx, cancel := untilInterrupted()
	defer cancel()
	if strings.HasPrefix(role, "caddy") { // the Caddy roles
		caddymodule.BinaryDefaults() // as cmd/caddy runs Caddy
	}
	switch role {
	case "backend":
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return err
		}
		srv := &fasthttp.Server{Handler: answerOK}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ln) }()
		fmt.Fprintln(out, "ready")
		<-ctx.Done()
		srv.Shutdown()
		return <-done
	case "fasthttp", "fasthttp-only", "fasthttp-rules", "fasthttp-quiet", "fasthttp-log", "fasthttp-limit", "fasthttp-all", "fasthttp-shared":
		store := registry.New(registry.Config{})
		cfg := routing.Config{Instances: store}
		if role == "fasthttp-rules" || role == "fasthttp-all" {
			if err := registerVersions(store, backend); err != nil {
				return err
			}
			rules, err := routing.ParseRules("bench rules", []byte(fixture.TwentyRules()))
			if err != nil {
				return err
			}
			cfg.Rules = rules
		} else if err := store.Register(benchInstance(backend), false); err != nil {
			return err
		}
		if role == "fasthttp-limit" {
			// A per-client limit no load reaches: what deciding it costs.
			rules, err := routing.ParseRules("bench limit", []byte("apps:\n  SVC:\n    limits: [{key: client, rate: 1000000000/s}]\n"))
			if err != nil {
				return err
			}
			cfg.Rules = rules
		}
		if role == "fasthttp-shared" {
			rules, closeShared, err := sharedLimitRules(redisURL)
			if err != nil {
				return err
			}
			defer closeShared()
			cfg.Rules = rules
		}
		gcfg := gateway.Config{Routing: cfg}
		switch role {
		case "fasthttp-quiet":
			gcfg.DisableTraffic, gcfg.DisableRequestID = true, true
		case "fasthttp-log", "fasthttp-all":
			f, err := os.CreateTemp("", "eurekabench-access-*.log")
			if err != nil {
				return err
			}
			defer os.Remove(f.Name())
			defer f.Close()
			gcfg.AccessLog = f
		}
		g, err := gateway.New(gcfg)
		if err != nil {
			return err
		}
		defer g.Close()
		if role == "fasthttp-all" {
			// The metrics as cmd/eureka serves them, scraped once: read at
			// scrape time, they cost a request nothing else.
			if err := scrapeGatewayMetrics(g); err != nil {
				return err
			}
		}
		// As cmd/eureka serves it: a processor spare beside the loops.
		scfg := gateway.ServerConfig{Addr: listen, SpareProcessor: true}
		if role == "fasthttp-only" {
			scfg.Loops = -1
		}
		srv := gateway.NewServer(g, scfg)
		if err := srv.Start(); err != nil {
			return err
		}
		if err := serveProfiled(ctx, profile, out); err != nil {
			srv.Stop(context.Background())
			return err
		}
		stopCtx, cancelStop := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancelStop()
		return srv.Stop(stopCtx)
	case "caddy":
		return serveCaddy(ctx, listen, backend, eurekaGatewayHandler, profile, out)
	case "caddy-static":
		return serveCaddy(ctx, listen, backend, staticProxyHandler(backend, "/svc"), profile, out)
	case roleCaddyFull, roleCaddyFullRP, roleCaddyStaticFull, roleCaddyFloor:
		return serveCaddyFull(ctx, role, listen, backend, profile, out)
	case "bare":
		// The least a fasthttp proxy does: no routing, no header work, the
		// response buffered. The ceiling of the approach, for reference.
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return err
		}
		hc := &fasthttp.HostClient{Addr: backend}
		srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.Request.SetRequestURI("/x")
			if err := hc.Do(&ctx.Request, &ctx.Response); err != nil {
				ctx.Error(err.Error(), fasthttp.StatusBadGateway)
			}
		}}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ln) }()
		fmt.Fprintln(out, "ready")
		<-ctx.Done()
		srv.Shutdown()
		hc.CloseIdleConnections()
		return <-done
	}
	return fmt.Errorf("unknown role %q", role)
}

// serveCaddy runs Caddy with the registry (on a port of its own) and
// handlers on listen, registers the backend through the registry's REST
// API, says "ready" on out and serves until ctx is done; with profile, a
// CPU profile of the process.
func serveCaddy(ctx context.Context, listen, backend, handlers, profile string, out io.Writer) error {
	port, err := serverPort()
	if err != nil {
		return err
	}
	regAddr := "127.0.0.1:" + port
	stop, err := runCaddy(caddyServer{"registry", regAddr, eurekaServerHandler}, caddyServer{"gateway", listen, handlers})
	if err != nil {
		return err
	}
	defer stop()
	if err := registerBackend(regAddr, backend); err != nil {
		return err
	}
	return serveProfiled(ctx, profile, out)
}

// startNginx runs nginx in the foreground with a generated configuration
// and a prefix directory of its own under the temporary directory:
// worker_processes auto, a keep-alive pool to the backend, and no access
// log, or with accessLog the combined format buffered to a file in that
// directory (access_log FILE combined buffer=64k), as a site that keeps
// one runs it. It is never a system service.
func startNginx(path, listen, backend string, accessLog bool) (stop func(), master int, err error) {
	dir, err := os.MkdirTemp("", "eurekabench-nginx-")
	if err != nil {
		return nil, 0, err
	}
	logLine := "access_log off;"
	if accessLog {
		logLine = fmt.Sprintf("access_log %s/access.log combined buffer=64k;", dir)
	}
	conf := fmt.Sprintf(`worker_processes auto;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 4096; }
http {
	%[4]s
	client_body_temp_path %[1]s/client_body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	upstream backend {
		server %[2]s;
		keepalive 64;
	}
	server {
		listen %[3]s;
		location / {
			proxy_pass http://backend;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
		}
	}
}
`, dir, backend, listen, logLine)
	confPath := filepath.Join(dir, "nginx.conf")
	errorLog := filepath.Join(dir, "error.log")
	// SIGQUIT: nginx's graceful stop.
	return startAnchor(dir, confPath, conf, listen, syscall.SIGQUIT, errorLog, path, "-p", dir, "-c", confPath, "-e", errorLog)
}

// awaitAnswer polls GET /x on addr until it answers 200, for at most
// within: an anchor's process says nothing when it is ready.
func awaitAnswer(addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		if status, err := request(addr, "GET", "/x", nil); err == nil && status == 200 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not answering in %s", within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
