package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// pushConfig sizes the push study.
type pushConfig struct {
	trials    int           // write-to-visible trials per kind, one client
	clients   int           // watching clients of a few apps each
	whole     int           // whole-registry watching clients: each holds the registry
	instances int           // registry size
	apps      int           // over this many apps
	rate      int           // changes per second
	d         time.Duration // how long each fleet phase runs
	pollers   int           // polling clients in the comparison
	appsEach  int           // apps per client in the interest phase
	settle    time.Duration // after a fleet phase's last change, before its figures are read
	server    rerun         // runs the registry's process
}

// The whole-registry phase runs fewer clients than the interest phase: each
// holds its own copy of the registry (about 12 MB at 10,000 instances), and
// all of them run in this one process.
var defaultPush = pushConfig{trials: 60, clients: 1000, whole: 200, instances: 10000, apps: 1000, rate: 100, d: 60 * time.Second,
	pollers: 50, appsEach: 5, settle: 2 * time.Second}

func pushCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	c := defaultPush
	fs.DurationVar(&c.d, "duration", c.d, "how long each fleet phase runs")
	fs.IntVar(&c.clients, "clients", c.clients, "watching clients of a few apps each")
	fs.IntVar(&c.whole, "whole-clients", c.whole, "whole-registry watching clients")
	fs.IntVar(&c.rate, "rate", c.rate, "changes per second")
	fs.IntVar(&c.trials, "trials", c.trials, "write-to-visible trials per kind")
	return func(out io.Writer, rec *record) error {
		var err error
		if c.server, err = thisBinary(); err != nil {
			return err
		}
		return runPush(c, out, rec)
	}
}

// runPush measures how fast a change reaches the consumers by the watch:
// one default client's write-to-visible latency, then a fleet of watching
// clients under a steady rate of changes (whole-registry watches, then
// watches of a few apps each, then polling every second for comparison).
// The registry runs in a child process, so its CPU and memory are its own.
func runPush(c pushConfig, out io.Writer, rec *record) error {
	fmt.Fprintf(out, "eurekabench push: %d instances over %d apps, %d changes/s, %s per fleet phase\n\n",
		c.instances, c.apps, c.rate, c.d)
	row := func(name, result, note string) { rec.row(out, "%-56s %24s   %s\n", name, result, note) }
	row("measurement", "result", "target")

	single, err := writeToVisible(c.trials)
	if err != nil {
		return err
	}
	for _, k := range []string{"register", "cancel", "out_of_service"} {
		l := single[k]
		row("write to client.Instances, "+k, fmt.Sprintf("%s / %s / %s", l.p50, l.p99, l.max), fmt.Sprintf("p50 < 100ms, max < 1s (%d trials)", l.n))
	}
	for _, phase := range []struct {
		name     string
		appsEach int
		watch    bool
		clients  int
	}{
		{"whole-registry watches", 0, true, c.whole},
		{fmt.Sprintf("watches of %d apps each", c.appsEach), c.appsEach, true, c.clients},
		{"polling every 1s (for comparison)", 0, false, c.pollers},
	} {
		r, err := fleet(c, phase.clients, phase.appsEach, phase.watch)
		if err != nil {
			return fmt.Errorf("%s: %w", phase.name, err)
		}
		row(fmt.Sprintf("%s: %d clients", phase.name, phase.clients), fmt.Sprintf("%d changes", r.changes), "")
		row("  delivery p50 / p99 / max", fmt.Sprintf("%s / %s / %s", r.lat.p50, r.lat.p99, r.lat.max), fmt.Sprintf("%d deliveries", r.lat.n))
		row("  server CPU", fmt.Sprintf("%.2f cores", r.cpu), "")
		row("  server RSS", fmt.Sprintf("%.0f MB", float64(r.rss)/1e6), "")
		row("  bytes sent per change per client", fmt.Sprintf("%.0f B", r.bytesPerChangePerClient), "")
	}
	return nil
}

type latencies struct {
	n             int
	p50, p99, max time.Duration
}

func summarize(l []time.Duration) latencies {
	if len(l) == 0 {
		return latencies{}
	}
	slices.Sort(l)
	round := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
	return latencies{n: len(l), p50: round(l[len(l)/2]), p99: round(l[len(l)*99/100]), max: round(l[len(l)-1])}
}

// writeToVisible times, for one client with default settings against our
// server on loopback, each write until client.Instances reflects it.
func writeToVisible(trials int) (map[string]latencies, error) {
	store := registry.New(registry.Config{})
	srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		return nil, err
	}
	defer srv.Stop(context.Background())
	client, err := discovery.New(discovery.Config{ServiceURLs: []string{"http://" + srv.Addr().String() + "/eureka/"}})
	if err != nil {
		return nil, err
	}
	client.Start()
	defer client.Stop(context.Background())
	<-client.Ready()
	visible := func(id string, up bool) bool {
		list := client.Instances("PROBE")
		if !up {
			list = client.AllInstances("PROBE")
		}
		return slices.ContainsFunc(list, func(i *eureka.InstanceInfo) bool { return i.ID() == id })
	}
	wait := func(cond func() bool) (time.Duration, error) {
		start := time.Now()
		for !cond() {
			if time.Since(start) > 10*time.Second {
				return 0, errors.New("a change did not arrive within 10s")
			}
			time.Sleep(200 * time.Microsecond)
		}
		return time.Since(start), nil
	}
	got := map[string][]time.Duration{}
	for n := range trials {
		i := fixture.Inst("PROBE", "p"+strconv.Itoa(n))
		start := time.Now()
		store.Register(i, false)
		if _, err := wait(func() bool { return visible(i.InstanceID, true) }); err != nil {
			return nil, err
		}
		got["register"] = append(got["register"], time.Since(start))
		start = time.Now()
		store.SetStatus("PROBE", i.InstanceID, eureka.StatusOutOfService, 0, false)
		if _, err := wait(func() bool { return !visible(i.InstanceID, true) }); err != nil {
			return nil, err
		}
		got["out_of_service"] = append(got["out_of_service"], time.Since(start))
		start = time.Now()
		store.Cancel("PROBE", i.InstanceID, false)
		if _, err := wait(func() bool { return !visible(i.InstanceID, false) }); err != nil {
			return nil, err
		}
		got["cancel"] = append(got["cancel"], time.Since(start))
	}
	out := map[string]latencies{}
	for k, l := range got {
		out[k] = summarize(l)
	}
	return out, nil
}

type fleetResult struct {
	changes                 int
	lat                     latencies
	cpu                     float64
	rss                     uint64
	bytesPerChangePerClient float64
}

// fleet runs clients against a registry in a child process while a writer
// changes one instance's metadata (seq) rate times a second, and measures
// when each change becomes visible to each client that holds its app.
func fleet(c pushConfig, clients, appsEach int, watch bool) (*fleetResult, error) {
	server, err := c.server.start("push-server", "-instances", strconv.Itoa(c.instances), "-apps", strconv.Itoa(c.apps))
	if err != nil {
		return nil, fmt.Errorf("starting the registry: %v", err)
	}
	defer server.stop()
	addr := server.line
	base := "http://" + addr + "/eureka/"

	// The writes: change k touches instance k*7919 mod instances.
	type write struct {
		app, id string
		at      time.Time
	}
	var writesMu sync.RWMutex
	var writes []write
	per := c.instances / c.apps
	target := func(k int) (string, string) {
		n := (k * 7919) % c.instances
		return "SERVICE-" + strconv.Itoa(n/per), fixture.SampleInstance(n).InstanceID
	}

	type tracker struct {
		client *discovery.Client
		apps   map[string]bool // nil: all
		next   int             // first write not yet seen
		lat    []time.Duration
	}
	trackers := make([]*tracker, clients)
	for n := range trackers {
		cfg := discovery.Config{ServiceURLs: []string{base}, RegistryFetchInterval: time.Second, DisableWatch: !watch}
		tr := &tracker{}
		if appsEach > 0 {
			tr.apps = map[string]bool{}
			for k := range appsEach {
				app := "SERVICE-" + strconv.Itoa((n*appsEach+k)%c.apps)
				cfg.Apps = append(cfg.Apps, app)
				tr.apps[app] = true
			}
		}
		cl, err := discovery.New(cfg)
		if err != nil {
			return nil, err
		}
		tr.client = cl
		trackers[n] = tr
	}
	for _, tr := range trackers {
		tr.client.Start()
	}
	defer func() {
		var wg sync.WaitGroup
		for _, tr := range trackers {
			wg.Add(1)
			go func() { defer wg.Done(); tr.client.Stop(context.Background()) }()
		}
		wg.Wait()
	}()
	for _, tr := range trackers {
		select {
		case <-tr.client.Ready():
		case <-time.After(10 * time.Minute):
			return nil, errors.New("clients did not load the registry within 10 minutes")
		}
	}

	// seen reports whether the client holds write k.
	seen := func(tr *tracker, k int) bool {
		writesMu.RLock()
		w := writes[k]
		writesMu.RUnlock()
		for _, i := range tr.client.AllInstances(w.app) {
			if i.ID() == w.id {
				seq, _ := strconv.Atoi(i.Metadata["seq"])
				return seq >= k
			}
		}
		return false
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for _, tr := range trackers {
		changes := tr.client.Changed()
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for !stop.Load() {
				select {
				case <-changes:
					changes = tr.client.Changed() // before the reads below
				case <-tick.C:
				}
				now := time.Now()
				writesMu.RLock()
				total := len(writes)
				writesMu.RUnlock()
				// Writes arrive in order: find the newest one held.
				held := -1
				for k := total - 1; k >= tr.next; k-- {
					writesMu.RLock()
					app := writes[k].app
					writesMu.RUnlock()
					if tr.apps != nil && !tr.apps[app] {
						continue
					}
					if seen(tr, k) {
						held = k
					}
					break
				}
				if held < 0 {
					continue
				}
				writesMu.RLock()
				for k := tr.next; k <= held; k++ {
					if tr.apps == nil || tr.apps[writes[k].app] {
						tr.lat = append(tr.lat, now.Sub(writes[k].at))
					}
				}
				writesMu.RUnlock()
				tr.next = held + 1
			}
		}()
	}

	http := &fasthttp.HostClient{Addr: addr}
	defer http.CloseIdleConnections()
	cpu := func() time.Duration { st, _ := readProcStat(server.pid()); return st.cpu }
	cpu0, io0 := cpu(), bytesWrittenBy(server.pid())
	start := time.Now()
	tick := time.NewTicker(time.Second / time.Duration(c.rate))
	for k := 0; time.Since(start) < c.d; k++ {
		<-tick.C
		app, id := target(k)
		writesMu.Lock()
		writes = append(writes, write{app, id, time.Now()})
		writesMu.Unlock()
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.Header.SetMethod("PUT")
		req.SetRequestURI(base + "apps/" + app + "/" + id + "/metadata?seq=" + strconv.Itoa(k))
		err := http.Do(req, resp)
		status := resp.StatusCode()
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
		if err != nil || status != 200 {
			tick.Stop()
			return nil, fmt.Errorf("metadata write: %v %d", err, status)
		}
	}
	tick.Stop()
	elapsed := time.Since(start)
	time.Sleep(c.settle) // the last changes arrive
	used, written := cpu()-cpu0, bytesWrittenBy(server.pid())-io0
	rss := residentBytesOf(server.pid())
	stop.Store(true)
	wg.Wait()

	var all []time.Duration
	for _, tr := range trackers {
		all = append(all, tr.lat...)
	}
	writesMu.RLock()
	n := len(writes)
	writesMu.RUnlock()
	return &fleetResult{
		changes: n, lat: summarize(all), cpu: used.Seconds() / elapsed.Seconds(), rss: rss,
		bytesPerChangePerClient: float64(written) / float64(n) / float64(clients),
	}, nil
}

// pushServerCommand is the registry's process: a registry of sample
// instances on a loopback port, which it prints, served until
// interrupted.
func pushServerCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	instances := fs.Int("instances", 10000, "registry size")
	apps := fs.Int("apps", 1000, "applications")
	return func(out io.Writer, rec *record) error { return pushServer(*instances, *apps, out) }
}

func pushServer(instances, apps int, out io.Writer) error {
	ctx, cancel := untilInterrupted()
	defer cancel()
	store := registry.New(registry.Config{})
	per := max(1, instances/apps)
	for n := range instances {
		i := fixture.SampleInstance(n)
		i.App = "SERVICE-" + strconv.Itoa(n/per)
		if err := store.Register(i, false); err != nil {
			return err
		}
	}
	srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		return err
	}
	fmt.Fprintln(out, srv.Addr().String())
	<-ctx.Done()
	stopCtx, cancelStop := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelStop()
	return srv.Stop(stopCtx)
}
