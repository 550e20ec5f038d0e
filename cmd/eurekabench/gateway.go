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
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/internal/proc"
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
// left out when redis-server is not installed); the gateways
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
	servers   rerun  // runs each server's process
	profile   string // the gateway's CPU profile, "" for none
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
	serve := fs.String("serve", "", "internal: serve one role (backend, fasthttp, caddy) until interrupted")
	listen := fs.String("listen", "", "internal: the role's listen address")
	backend := fs.String("backend", "", "internal: the backend's address")
	redisURL := fs.String("redis", "", "internal: the shared limit's Redis")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the gateway's process to this file")
	return func(out io.Writer, rec *record) error {
		if *serve != "" {
			return serveRole(*serve, *listen, *backend, *profile, *redisURL, out)
		}
		servers, err := thisBinary()
		if err != nil {
			return err
		}
		c := gatewayBenchConfig{d: *d, warmup: min(*d/4, time.Second), conns: *conns, rounds: *rounds, servers: servers}
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

	// the current round's sums
	requests, seconds, cpuSeconds float64
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
	ports, err := freePorts(12)
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
		{"fasthttp-log", addr(9)}, {"fasthttp-limit", addr(10)}, {"fasthttp-shared", addr(11)},
	} {
		if role.name == "fasthttp-shared" && c.redis == "" {
			fmt.Fprintln(out, "redis-server is not installed: the shared limit's target is left out")
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
	if c.nginx != "" {
		stop, master, err := startNginx(c.nginx, addr(3), backendAddr)
		if err != nil {
			return fmt.Errorf("starting nginx: %v", err)
		}
		stops = append(stops, stop)
		targets = append(targets, &target{name: "nginx, static upstream", addr: addr(3), path: "/x",
			pids: func() []int { return append(childrenOf(master), master) }})
	}
	fast := &target{name: "gateway, by name", addr: addr(1), path: "/svc/x", pids: one(pids["fasthttp"]), headers: ruleHeaders}
	ruled := &target{name: "gateway, 20 traffic rules", addr: addr(7), path: "/svc/x", pids: one(pids["fasthttp-rules"]), headers: ruleHeaders}
	quiet := &target{name: "gateway, no metrics, no ids", addr: addr(8), path: "/svc/x", pids: one(pids["fasthttp-quiet"]), headers: ruleHeaders}
	logged := &target{name: "gateway, access log to a file", addr: addr(9), path: "/svc/x", pids: one(pids["fasthttp-log"]), headers: ruleHeaders}
	limited := &target{name: "gateway, a per-client limit", addr: addr(10), path: "/svc/x", pids: one(pids["fasthttp-limit"]), headers: ruleHeaders}
	caddyGW := &target{name: "Caddy eureka_gateway, by name", addr: addr(2), path: "/svc/x", pids: one(pids["caddy"])}
	caddyStatic := &target{name: "Caddy reverse_proxy, static", addr: addr(6), path: "/svc/x", pids: one(pids["caddy-static"])}
	bare := &target{name: "bare fasthttp proxy (reference)", addr: addr(4), path: "/svc/x", pids: one(pids["bare"])}
	only := &target{name: "gateway without loops (reference)", addr: addr(5), path: "/svc/x", pids: one(pids["fasthttp-only"])}
	targets = append(targets, fast, ruled, quiet, logged, limited, caddyGW, caddyStatic, bare, only)
	var shared *target
	if c.redis != "" {
		shared = &target{name: "gateway, a shared Redis limit", addr: addr(11), path: "/svc/x", pids: one(pids["fasthttp-shared"]), headers: ruleHeaders}
		targets = append(targets, shared)
	}
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
		if _, _, err := c.measure(t, min(slice, c.warmup)); err != nil {
			return err
		}
	}
	for r := 1; r <= c.rounds; r++ {
		end := meter{rec: rec}.phase(fmt.Sprintf("round %d", r))
		fmt.Fprintf(out, "\nround %d (%d slices of %s each)\n", r, nSlices, slice)
		for _, t := range targets {
			t.requests, t.seconds, t.cpuSeconds = 0, 0, 0
		}
		for range nSlices {
			for _, t := range targets {
				before := cpuSeconds(t.pids)
				n, secs, err := c.measure(t, slice)
				if err != nil {
					return err
				}
				t.requests += n
				t.seconds += secs
				t.cpuSeconds += cpuSeconds(t.pids) - before
			}
		}
		for _, t := range targets {
			rate := t.requests / t.seconds
			t.rates = append(t.rates, rate)
			cpu := ""
			if t.pids != nil && t.cpuSeconds > 0 {
				t.cpu = append(t.cpu, t.cpuSeconds/t.requests)
				cpu = fmt.Sprintf("   proxy CPU %5.1f µs/request", 1e6*t.cpuSeconds/t.requests)
			}
			fmt.Fprintf(out, "  %-32s %9.0f req/s%s\n", t.name, rate, cpu)
			rec.add(fmt.Sprintf("%s.rate.%d", t.name, r), rate, "/s")
			if cpu != "" {
				rec.add(fmt.Sprintf("%s.cpu.%d", t.name, r), 1e6*t.cpuSeconds/t.requests, "µs")
			}
		}
		end()
		last := func(t *target) float64 { return t.rates[len(t.rates)-1] }
		if c.nginx != "" {
			fmt.Fprintf(out, "  gateway / nginx                 %9.2f   (target >= 0.90)\n", last(fast)/last(targets[1]))
			fmt.Fprintf(out, "  bare fasthttp proxy / nginx     %9.2f\n", last(bare)/last(targets[1]))
			fmt.Fprintf(out, "  gateway without loops / nginx   %9.2f\n", last(only)/last(targets[1]))
		}
		fmt.Fprintf(out, "  gateway / Caddy                 %9.2f   (target >= 4)\n", last(fast)/last(caddyGW))
		fmt.Fprintf(out, "  Caddy eureka_gateway / static   %9.2f   (target >= 0.90)\n", last(caddyGW)/last(caddyStatic))
		fmt.Fprintf(out, "  gateway / direct                %9.2f\n", last(fast)/last(targets[0]))
		fmt.Fprintf(out, "  gateway, 20 rules / no rules    %9.2f   (target >= 0.90)\n", last(ruled)/last(fast))
		fmt.Fprintf(out, "  gateway / no metrics, no ids    %9.2f   (target >= 0.95)\n", last(fast)/last(quiet))
		fmt.Fprintf(out, "  gateway, access log / without   %9.2f   (target >= 0.85)\n", last(logged)/last(fast))
		fmt.Fprintf(out, "  gateway, a limit / without      %9.2f   (target >= 0.95)\n", last(limited)/last(fast))
		if shared != nil {
			fmt.Fprintf(out, "  gateway, shared limit / without %9.2f   (target >= 0.70)\n", last(shared)/last(fast))
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
	if c.nginx != "" {
		lo, hi := ratios(fast, targets[1])
		fmt.Fprintf(out, "  gateway / nginx                 %.2f - %.2f (same round)\n", lo, hi)
		lo, hi = ratios(bare, targets[1])
		fmt.Fprintf(out, "  bare fasthttp proxy / nginx     %.2f - %.2f (same round)\n", lo, hi)
		lo, hi = ratios(only, targets[1])
		fmt.Fprintf(out, "  gateway without loops / nginx   %.2f - %.2f (same round)\n", lo, hi)
	}
	lo, hi := ratios(fast, caddyGW)
	fmt.Fprintf(out, "  gateway / Caddy                 %.2f - %.2f (same round)\n", lo, hi)
	lo, hi = ratios(caddyGW, caddyStatic)
	fmt.Fprintf(out, "  Caddy eureka_gateway / static   %.2f - %.2f (same round)\n", lo, hi)
	lo, hi = ratios(ruled, fast)
	fmt.Fprintf(out, "  gateway, 20 rules / no rules    %.2f - %.2f (same round)\n", lo, hi)
	lo, hi = ratios(fast, quiet)
	fmt.Fprintf(out, "  gateway / no metrics, no ids    %.2f - %.2f (same round)\n", lo, hi)
	lo, hi = ratios(logged, fast)
	fmt.Fprintf(out, "  gateway, access log / without   %.2f - %.2f (same round)\n", lo, hi)
	lo, hi = ratios(limited, fast)
	fmt.Fprintf(out, "  gateway, a limit / without      %.2f - %.2f (same round)\n", lo, hi)
	if shared != nil {
		lo, hi = ratios(shared, fast)
		fmt.Fprintf(out, "  gateway, shared limit / without %.2f - %.2f (same round)\n", lo, hi)
	}
	return nil
}

// measure loads t for about d and returns how many requests were answered
// 200, and in how long.
func (c gatewayBenchConfig) measure(t *target, d time.Duration) (requests, seconds float64, err error) {
	if c.wrk == "" {
		r, err := load(loadSpec{addr: t.addr, conc: c.conns, d: d, build: func(_ int, req *fasthttp.Request) {
			req.SetRequestURI(t.path)
			for _, h := range t.headers {
				req.Header.Set(h[0], h[1])
			}
		}})
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %v", t.name, err)
		}
		return float64(r.n), r.elapsed.Seconds(), nil
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	args := []string{"-t1", "-c" + strconv.Itoa(c.conns), "-d" + strconv.Itoa(secs) + "s"}
	for _, h := range t.headers {
		args = append(args, "-H", h[0]+": "+h[1])
	}
	outp, err := exec.Command(c.wrk, append(args, "http://"+t.addr+t.path)...).CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: wrk: %v\n%s", t.name, err, outp)
	}
	if m := regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`).FindSubmatch(outp); m != nil {
		return 0, 0, fmt.Errorf("%s: %s answers were not 200\n%s", t.name, m[1], outp)
	}
	m := regexp.MustCompile(`(\d+) requests in ([0-9.]+)(m?s)`).FindSubmatch(outp)
	if m == nil {
		return 0, 0, fmt.Errorf("%s: no count in wrk's output:\n%s", t.name, outp)
	}
	requests, _ = strconv.ParseFloat(string(m[1]), 64)
	seconds, _ = strconv.ParseFloat(string(m[2]), 64)
	if string(m[3]) == "ms" {
		seconds /= 1000
	}
	if seconds <= 0 {
		return 0, 0, fmt.Errorf("%s: wrk ran for %s", t.name, m[0])
	}
	return requests, seconds, nil
}

// startServer runs this binary serving role on listen, and returns when it
// answers there; stop interrupts it and waits for it.
func (c gatewayBenchConfig) startServer(role, listen, backend string) (stop func(), pid int, err error) {
	args := []string{"gateway", "-serve", role, "-listen", listen, "-backend", backend, "-redis", c.redis}
	if role == "fasthttp" && c.profile != "" {
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
	case "fasthttp", "fasthttp-only", "fasthttp-rules", "fasthttp-quiet", "fasthttp-log", "fasthttp-limit", "fasthttp-shared":
		store := registry.New(registry.Config{})
		cfg := routing.Config{Instances: store}
		if role == "fasthttp-rules" {
			if err := registerVersions(store, backend); err != nil {
				return err
			}
			rules, err := routing.ParseRules("bench rules", []byte(benchRules()))
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
		case "fasthttp-log":
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
		scfg := gateway.ServerConfig{Addr: listen}
		if role == "fasthttp-only" {
			scfg.Loops = -1
		}
		srv := gateway.NewServer(g, scfg)
		if err := srv.Start(); err != nil {
			return err
		}
		if profile != "" {
			stop, err := startCPUProfile(profile)
			if err != nil {
				return err
			}
			defer stop()
		}
		fmt.Fprintln(out, "ready")
		<-ctx.Done()
		stopCtx, cancelStop := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancelStop()
		return srv.Stop(stopCtx)
	case "caddy":
		return serveCaddy(ctx, listen, backend, eurekaGatewayHandler, out)
	case "caddy-static":
		return serveCaddy(ctx, listen, backend, staticProxyHandler(backend, "/svc"), out)
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
// API, says "ready" on out and serves until ctx is done.
func serveCaddy(ctx context.Context, listen, backend, handlers string, out io.Writer) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	regAddr := "127.0.0.1:" + ports[0]
	stop, err := runCaddy(caddyServer{"registry", regAddr, eurekaServerHandler}, caddyServer{"gateway", listen, handlers})
	if err != nil {
		return err
	}
	defer stop()
	if err := registerBackend(regAddr, backend); err != nil {
		return err
	}
	fmt.Fprintln(out, "ready")
	<-ctx.Done()
	return nil
}

// startNginx runs nginx in the foreground with a generated configuration
// and a prefix directory of its own under the temporary directory:
// worker_processes auto, a keep-alive pool to the backend, no access log.
// It is never a system service.
func startNginx(path, listen, backend string) (stop func(), master int, err error) {
	dir, err := os.MkdirTemp("", "eurekabench-nginx-")
	if err != nil {
		return nil, 0, err
	}
	conf := fmt.Sprintf(`worker_processes auto;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
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
`, dir, backend, listen)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, 0, err
	}
	p, err := proc.Start(context.Background(), "nginx", proc.Config{Stdout: os.Stderr, Stderr: os.Stderr},
		path, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, 0, err
	}
	stop = func() {
		p.Stop(syscall.SIGQUIT, 10*time.Second) // nginx's graceful stop
		os.RemoveAll(dir)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if status, err := request(listen, "GET", "/x", nil); err == nil && status == 200 {
			return stop, p.Pid(), nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			stop()
			return nil, 0, fmt.Errorf("not answering in 10 s: %s", log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
