package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/internal/proc"
)

// The million study (issue 31): a million Spring-shaped instances on one
// standalone node, and the reads a fleet asks of it right after a cold
// start. The node is cmd/eureka, built with go build into a temporary
// directory (or -eureka), in a process of its own on loopback, so the CPU
// and memory read from /proc are the server's own; the load runs here.
//
//  1. -instances instances register over -apps apps, from
//     -register-conns concurrent clients (POST, JSON, as
//     fixture.SampleInstance: a Spring Boot client's registration with
//     its metadata, data center info, ports, URLs and VIPs).
//  2. Heartbeats start on -heartbeat-conns connections, each sending one
//     after the other as fast as they are answered, over the registered
//     instances in turn, until the end of the run; every heartbeat's
//     latency is kept. For -baseline they run alone (while the server
//     builds the documents ahead of their readers).
//  3. -readers first full fetches at once (GET apps, Accept:
//     application/json, Accept-Encoding: gzip), each on its own
//     connection: the wall time until all are answered in full.
//  4. For -duration, -delta-clients clients each fetch the gzipped JSON
//     delta once a second (their first fetches spread over the first
//     second) while -changes-per-second changes happen to random
//     instances: a status override to OUT_OF_SERVICE, its removal, and
//     two re-registrations, in turn. Each delta's time is kept twice:
//     until its header (the server's time to answer, a build of the
//     delta included, the transfer of its body not: what the target is
//     about) and until its last byte.
//  5. One read of each format not read yet: the full registry plain
//     JSON, plain XML and gzip XML, the delta plain JSON, plain XML and
//     gzip XML; so every read has been served at least once in both
//     encodings. Then the server's VmRSS, and VmHWM, its peak.
//  6. For -baseline the heartbeats run alone again, the documents built:
//     the server's CPU per heartbeat, which is subtracted from each
//     phase's CPU to give the CPU of its reads (an estimate).
//
// Then the heartbeats stop, the documents kept are counted (instances in
// the first full fetch and the first delta), and one line per target of
// issue 31 is printed beside it.
//
//	go run ./cmd/eurekabench million
//	go run ./cmd/eurekabench million -instances 100000 -duration 15s
//
// -profile DIR builds cmd/eureka with one more file, added through go
// build -overlay (the repository's cmd/eureka is not changed), that serves
// net/http/pprof on another loopback port when EUREKABENCH_PPROF names
// one; the study then writes a CPU profile of the server for each phase
// (DIR/cpu-<phase>.pprof) and a heap profile at its end
// (DIR/heap-<phase>.pprof), and prints the Go heap beside the RSS. Read
// them with go tool pprof -top <the cmd/eureka binary, DIR/eureka> <profile>.

// millionConfig is the study's settings.
type millionConfig struct {
	instances, apps int
	d, baseline     time.Duration
	hbConns         int
	regConns        int
	readers         int
	deltaClients    int
	changesPerSec   int
	eureka          string // the cmd/eureka binary; "" to build it
	serverFlags     []string
	profile         string // the profiles' directory; "" for none
}

// millionCommand is "eurekabench million".
func millionCommand(fs *flag.FlagSet) func(io.Writer) error {
	c := millionConfig{}
	fs.IntVar(&c.instances, "instances", 1_000_000, "instances registered")
	fs.IntVar(&c.apps, "apps", 1000, "over this many applications")
	fs.DurationVar(&c.d, "duration", 60*time.Second, "how long the delta clients read while changes happen")
	fs.DurationVar(&c.baseline, "baseline", 5*time.Second, "how long heartbeats run alone, first and at the end (the server's CPU per heartbeat, at the end)")
	fs.IntVar(&c.hbConns, "heartbeat-conns", 16, "heartbeat connections, each sending as fast as it is answered")
	fs.IntVar(&c.regConns, "register-conns", 16, "concurrent registering clients")
	fs.IntVar(&c.readers, "readers", 20, "concurrent first full fetches")
	fs.IntVar(&c.deltaClients, "delta-clients", 50, "clients fetching the delta once a second")
	fs.IntVar(&c.changesPerSec, "changes-per-second", 10, "changes while the delta clients read")
	fs.StringVar(&c.eureka, "eureka", "", "the cmd/eureka binary to run (default: built with go build into a temporary directory)")
	serverFlags := fs.String("server-flags", "", `more flags for cmd/eureka, separated by spaces ("-memory-limit=3.5GiB")`)
	fs.StringVar(&c.profile, "profile", "", "write CPU and heap profiles of the server, one per phase, into this directory (builds cmd/eureka with pprof)")
	return func(out io.Writer) error {
		c.serverFlags = strings.Fields(*serverFlags)
		switch {
		case c.instances < 1 || c.apps < 1 || c.apps > c.instances:
			return fmt.Errorf("-instances %d and -apps %d: at least one app, and no more apps than instances", c.instances, c.apps)
		case c.hbConns < 1 || c.regConns < 1 || c.readers < 1 || c.deltaClients < 1 || c.changesPerSec < 1:
			return errors.New("-heartbeat-conns, -register-conns, -readers, -delta-clients and -changes-per-second need at least 1")
		case c.d < time.Second || c.baseline < time.Second:
			return errors.New("-duration and -baseline need at least 1s")
		case c.profile != "" && c.eureka != "":
			return errors.New("-profile builds cmd/eureka itself: leave out -eureka")
		}
		return untilStopped(out, func(ctx context.Context, out io.Writer) error { return runMillion(ctx, c, out) })
	}
}

// untilStopped runs a study whose servers are processes of their own,
// with a context that every way out cancels, so that the study stops its
// servers first: Ctrl-C, SIGTERM, SIGHUP, and a closed stdout (| head),
// whose SIGPIPE would otherwise end this process on the spot, leaving the
// servers running; its writes fail instead, which ends the run.
func untilStopped(out io.Writer, run func(ctx context.Context, out io.Writer) error) error {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err := run(ctx, cancelOnError{out, cancel})
	if ctx.Err() != nil {
		return errors.New("interrupted; the servers have stopped")
	}
	return err
}

// cancelOnError is a writer that cancels the run when a write fails.
type cancelOnError struct {
	w      io.Writer
	cancel func()
}

func (c cancelOnError) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil {
		c.cancel()
	}
	return n, err
}

// The phases after the registrations, during which heartbeats run.
const (
	phaseAlone = iota
	phaseFull
	phaseDelta
	phaseFormats
	phaseQuiet
	phases
)

var phaseNames = [phases]string{"heartbeats alone", "first full fetches", "deltas and changes", "one read of each format", "heartbeats alone again"}

// millionRun is one run: the server's process and what the phases share.
type millionRun struct {
	ctx   context.Context
	c     millionConfig
	out   io.Writer
	node  *node
	addr  string // the registry, host:port
	pprof string // the server's pprof, host:port; "" without -profile
	paths []string
	hb    *heartbeats
	// the Go heap at each profiled phase's end, when profiling
	heap map[string]memStats
}

func runMillion(ctx context.Context, c millionConfig, out io.Writer) (err error) {
	dir, err := os.MkdirTemp("", "eurekabench-million-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	r := &millionRun{ctx: ctx, c: c, out: out, heap: map[string]memStats{}}
	defer func() {
		if r.hb != nil {
			r.hb.halt()
		}
		if r.node != nil {
			if err != nil && r.node.exited() {
				err = fmt.Errorf("%v\nthe server exited; its log ends:\n%s", err, r.node.logTail())
			}
			r.node.stop()
		}
	}()

	built := ""
	if c.eureka == "" {
		start := time.Now()
		if c.eureka, err = buildEureka(ctx, dir, c.profile); err != nil {
			return err
		}
		built = fmt.Sprintf("; cmd/eureka built in %.1f s", time.Since(start).Seconds())
		if c.profile != "" {
			built += " with pprof (profiles in " + c.profile + ")"
		}
	}
	r.c = c
	flags := ""
	if len(c.serverFlags) > 0 {
		flags = "; cmd/eureka " + strings.Join(c.serverFlags, " ")
	}
	fmt.Fprintf(out, "eurekabench million: %s instances over %s apps; %d CPUs, load average %s before the run%s%s\n",
		commas(c.instances), commas(c.apps), runtime.NumCPU(), loadAverage(), built, flags)

	if err := r.start(dir); err != nil {
		return err
	}
	return r.measure()
}

// eurekaBinary is bin, or, when bin is "", cmd/eureka built into dir,
// with a note of how long the build took for the study's header ("" when
// it was given).
func eurekaBinary(ctx context.Context, dir, bin string) (string, string, error) {
	if bin != "" {
		return bin, "", nil
	}
	start := time.Now()
	bin, err := buildEureka(ctx, dir, "")
	if err != nil {
		return "", "", err
	}
	return bin, fmt.Sprintf("cmd/eureka built in %.1f s", time.Since(start).Seconds()), nil
}

// buildEureka builds cmd/eureka into dir; with profile, with the pprof
// file added by an overlay.
func buildEureka(ctx context.Context, dir, profile string) (string, error) {
	bin := filepath.Join(dir, "eureka")
	var flags []string
	if profile != "" {
		if err := os.MkdirAll(profile, 0o755); err != nil {
			return "", err
		}
		overlay, err := pprofOverlay(ctx, dir)
		if err != nil {
			return "", err
		}
		flags = []string{"-overlay", overlay}
		// The binary beside the profiles, for go tool pprof.
		bin = filepath.Join(profile, "eureka")
	}
	if err := proc.GoBuild(ctx, "", nil, bin, append(flags, "github.com/eurekagate/eurekagate/cmd/eureka")...); err != nil {
		return "", fmt.Errorf("building cmd/eureka (or give -eureka): %v", err)
	}
	return bin, nil
}

// pprofSource is the file -profile adds to cmd/eureka: with
// EUREKABENCH_PPROF set, net/http/pprof on that address, and a CPU
// profile started and stopped on request (/bench/cpu/start, then
// /bench/cpu/stop, which answers with it), so that a phase of unknown
// length has one profile, and /bench/gc, a full collection. The
// server's own handlers are on their own mux, so none of this is on the
// registry's port.
const pprofSource = `package main

// Added by eurekabench million -profile and eurekabench java through go
// build -overlay.

import (
	"bytes"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"sync"
)

func init() {
	addr := os.Getenv("EUREKABENCH_PPROF")
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		panic(err)
	}
	var mu sync.Mutex
	var cpu *bytes.Buffer
	http.HandleFunc("/bench/cpu/start", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if cpu != nil {
			http.Error(w, "a CPU profile is running", http.StatusConflict)
			return
		}
		cpu = new(bytes.Buffer)
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu = nil
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	// A full collection that returns the freed memory to the system, as
	// jcmd GC.run asks of a JVM: eurekabench java reads the resident
	// memory after it.
	http.HandleFunc("/bench/gc", func(w http.ResponseWriter, r *http.Request) {
		debug.FreeOSMemory()
	})
	http.HandleFunc("/bench/cpu/stop", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if cpu == nil {
			http.Error(w, "no CPU profile is running", http.StatusConflict)
			return
		}
		pprof.StopCPUProfile()
		w.Write(cpu.Bytes())
		cpu = nil
	})
	go http.Serve(ln, nil)
}
`

// pprofOverlay writes the pprof file and the overlay that adds it to
// cmd/eureka's directory, and returns the overlay's path.
func pprofOverlay(ctx context.Context, dir string) (string, error) {
	outp, err := exec.CommandContext(ctx, "go", "list", "-f", "{{.Dir}}", "github.com/eurekagate/eurekagate/cmd/eureka").Output()
	if err != nil {
		return "", fmt.Errorf("go list cmd/eureka: %v", err)
	}
	src := filepath.Join(dir, "pprof.go")
	if err := os.WriteFile(src, []byte(pprofSource), 0o644); err != nil {
		return "", err
	}
	target := filepath.Join(strings.TrimSpace(string(outp)), "zz_eurekabench_pprof.go")
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {target: src}})
	path := filepath.Join(dir, "overlay.json")
	return path, os.WriteFile(path, overlay, 0o644)
}

// start runs the server and waits until it answers.
func (r *millionRun) start(dir string) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	r.addr = "127.0.0.1:" + ports[0]
	if r.c.profile != "" {
		r.pprof = "127.0.0.1:" + ports[1]
		// The child inherits the environment: this is how it learns the
		// address.
		os.Setenv("EUREKABENCH_PPROF", r.pprof)
		defer os.Unsetenv("EUREKABENCH_PPROF")
	}
	if r.node, err = startEureka(r.c.eureka, dir, "eureka", r.addr, r.c.serverFlags...); err != nil {
		return fmt.Errorf("starting the server: %v", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		// Not /eureka/apps: read without Accept, that is the XML
		// registry, which the server would then build ahead of its
		// readers whenever it goes quiet, as for a fleet that reads XML
		// (seconds of CPU at a million); Spring's clients read JSON.
		status, err := request(r.addr, "GET", "/eureka/status", nil)
		if err == nil && status == 200 {
			return nil
		}
		switch {
		case r.node.exited():
			return errors.New("the server exited before it answered")
		case time.Now().After(deadline):
			return errors.New("the server did not answer within a minute")
		}
		select {
		case <-r.ctx.Done():
			return r.ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// millionInstance is the n-th instance of the study: testkit's
// Spring-shaped instance, in app SERVICE-<n mod apps>, its instance id
// (host:app:port, as Spring Cloud's) and VIPs that app's.
func millionInstance(n, apps int) *eureka.InstanceInfo {
	i := fixture.SampleInstance(n)
	lower := "service-" + strconv.Itoa(n%apps)
	i.App = strings.ToUpper(lower)
	i.InstanceID = i.HostName + ":" + lower + ":" + strconv.Itoa(i.Port.Number)
	i.VIPAddress, i.SecureVIPAddress = lower, lower
	return i
}

// millionPath is the n-th instance's path: /eureka/apps/<app>/<id>.
func millionPath(n, apps int) string {
	i := millionInstance(n, apps)
	return "/eureka/apps/" + i.App + "/" + i.InstanceID
}

// cpu is the server's CPU time so far.
func (r *millionRun) cpu() time.Duration {
	st, _ := readProcStat(r.node.pid())
	return st.cpu
}

// memory is the server's VmRSS and VmHWM.
func (r *millionRun) memory() (rss, hwm uint64) { return memoryOf(r.node.pid()) }

// measure runs the phases and prints their figures.
func (r *millionRun) measure() error {
	c := r.c
	out := r.out
	// 1. Registrations.
	if err := r.profileStart("register"); err != nil {
		return err
	}
	regUse := r.usage()
	took, err := r.register()
	if err != nil {
		return err
	}
	regCores := r.usage().since(regUse)
	if err := r.profileStop("register"); err != nil {
		return err
	}
	rss, hwmReg := r.memory()
	fmt.Fprintf(out, "registrations: %s in %.1f s, %s /s (%d clients); server RSS %s%s\n",
		commas(c.instances), took.Seconds(), commas(int(float64(c.instances)/took.Seconds())), c.regConns, gb(rss), r.heapNote("register"))
	fmt.Fprintf(out, "  cores: %s\n", regCores)

	r.paths = make([]string, c.instances)
	for n := range r.paths {
		r.paths[n] = millionPath(n, c.apps)
	}

	// 2. Heartbeats, alone first.
	r.hb = startHeartbeats(r.addr, r.paths, c.hbConns)
	var walls [phases]time.Duration
	var cpus [phases]time.Duration
	var beats [phases]int64
	var cores [phases]coreUse
	phase := func(p int) (end func()) {
		r.hb.phase.Store(int32(p))
		cpu0, beats0, t0, use0 := r.cpu(), r.hb.count.Load(), time.Now(), r.usage()
		return func() {
			walls[p], cpus[p], beats[p] = time.Since(t0), r.cpu()-cpu0, r.hb.count.Load()-beats0
			cores[p] = r.usage().since(use0)
		}
	}
	if err := r.profileStart("alone"); err != nil {
		return err
	}
	end := phase(phaseAlone)
	if err := r.sleep(c.baseline); err != nil {
		return err
	}
	end()
	if err := r.profileStop("alone"); err != nil {
		return err
	}
	if beats[phaseAlone] == 0 {
		return fmt.Errorf("no heartbeat answered in %s (%d failed)", c.baseline, r.hb.failed.Load())
	}
	fmt.Fprintf(out, "heartbeats alone (%d connections, %s): %s /s; server %.2f cores, %.1f µs of CPU per heartbeat (the documents being built ahead)\n",
		c.hbConns, c.baseline, commas(int(float64(beats[phaseAlone])/walls[phaseAlone].Seconds())),
		cpus[phaseAlone].Seconds()/walls[phaseAlone].Seconds(), us(cpus[phaseAlone]/time.Duration(beats[phaseAlone])))

	// 3. The first full fetches, all at once.
	if err := r.profileStart("full"); err != nil {
		return err
	}
	end = phase(phaseFull)
	full, err := r.firstFullFetches()
	end()
	if err != nil {
		return err
	}
	if err := r.profileStop("full"); err != nil {
		return err
	}
	rssFull, hwmFull := r.memory()
	fmt.Fprintf(out, "%d concurrent first full fetches (JSON, gzip), each on its own connection: all answered in full in %.2f s (headers of the first after %.2f s, the first answered in full after %.2f s); %s each%s\n",
		c.readers, full.wall.Seconds(), full.firstHeader.Seconds(), full.firstDone.Seconds(), mbf(full.bytes), full.sameNote())
	fmt.Fprintf(out, "  server CPU %.2f s in %.2f s; RSS %s after%s\n",
		cpus[phaseFull].Seconds(), walls[phaseFull].Seconds(), gb(rssFull), r.heapNote("full"))

	// 4. Deltas while changes happen.
	if err := r.profileStart("delta"); err != nil {
		return err
	}
	end = phase(phaseDelta)
	deltas, err := r.deltasAndChanges()
	end()
	if err != nil {
		return err
	}
	if err := r.profileStop("delta"); err != nil {
		return err
	}
	rssDelta, hwmDelta := r.memory()
	all := summarize(slices.Clone(deltas.latencies))
	later := summarize(slices.Clone(deltas.latencies[min(len(deltas.latencies), deltas.firstRound):]))
	heads := summarize(slices.Clone(deltas.headers))
	laterHeads := summarize(slices.Clone(deltas.headers[min(len(deltas.headers), deltas.firstRound):]))
	fmt.Fprintf(out, "deltas (JSON, gzip): %d clients once a second for %s while %d changes/s were asked: %s changes made (%d failed), %s deltas\n",
		c.deltaClients, c.d, c.changesPerSec, commas(int(deltas.changes)), deltas.changeFailures, commas(all.n))
	fmt.Fprintf(out, "  delta p50 / p99 / max: %s; after each client's first: %s\n", all3(all), all3(later))
	fmt.Fprintf(out, "  until the header (the server's time to answer, its build included, the transfer not): %s; after each client's first: %s\n",
		all3(heads), all3(laterHeads))
	fmt.Fprintf(out, "  delta size: first %s, last %s (gzip)\n", mbf(deltas.firstBytes), mbf(deltas.lastBytes))
	fmt.Fprintf(out, "  server CPU %.2f s in %.1f s (%.2f cores); RSS %s after%s\n",
		cpus[phaseDelta].Seconds(), walls[phaseDelta].Seconds(), cpus[phaseDelta].Seconds()/walls[phaseDelta].Seconds(), gb(rssDelta), r.heapNote("delta"))

	// 5. One read of each format.
	if err := r.profileStart("formats"); err != nil {
		return err
	}
	end = phase(phaseFormats)
	reads, err := r.eachFormat()
	end()
	if err != nil {
		return err
	}
	if err := r.profileStop("formats"); err != nil {
		return err
	}
	rssEnd, hwm := r.memory()

	// 6. Heartbeats alone again, every document built: their CPU, which
	// the reads' estimates subtract.
	end = phase(phaseQuiet)
	if err := r.sleep(c.baseline); err != nil {
		return err
	}
	end()
	if beats[phaseQuiet] == 0 {
		return fmt.Errorf("no heartbeat answered in %s at the end (%d failed)", c.baseline, r.hb.failed.Load())
	}
	perBeat := cpus[phaseQuiet] / time.Duration(beats[phaseQuiet])
	fmt.Fprintf(out, "heartbeats alone again: %s /s; server %.2f cores, %.1f µs of CPU per heartbeat, which the reads' CPU below excludes\n",
		commas(int(float64(beats[phaseQuiet])/walls[phaseQuiet].Seconds())), cpus[phaseQuiet].Seconds()/walls[phaseQuiet].Seconds(), us(perBeat))
	// readsCPU is a phase's server CPU less its heartbeats at that cost.
	readsCPU := func(cpu time.Duration, n int64) time.Duration { return max(0, cpu-time.Duration(n)*perBeat) }
	fullReads, deltaReads := readsCPU(cpus[phaseFull], beats[phaseFull]), readsCPU(cpus[phaseDelta], beats[phaseDelta])
	fmt.Fprintf(out, "server memory: VmRSS %s, VmHWM %s (its peak); RSS / peak after the registrations %s / %s, the full fetches %s / %s, the deltas %s / %s%s\n",
		gb(rssEnd), gb(hwm), gb(rss), gb(hwmReg), gb(rssFull), gb(hwmFull), gb(rssDelta), gb(hwmDelta), r.heapNote("formats"))

	// The heartbeats' figures over the whole run.
	r.hb.halt()
	hbAll, hbPhase := r.hb.latencies()
	worst, worstPhase := time.Duration(0), ""
	for p := range phases {
		if hbPhase[p].n > 0 && hbPhase[p].p99 >= worst {
			worst, worstPhase = hbPhase[p].p99, phaseNames[p]
		}
	}
	var wall time.Duration
	for _, w := range walls {
		wall += w
	}
	fmt.Fprintf(out, "heartbeats over the run: %s in %.1f s (%s /s), p50 / p99 / max %s; %d answered 404 (lease gone), %d failed\n",
		commas(hbAll.n), wall.Seconds(), commas(int(float64(hbAll.n)/wall.Seconds())), all3(hbAll), r.hb.notFound.Load(), r.hb.failed.Load())
	for p := range phases {
		l := hbPhase[p]
		fmt.Fprintf(out, "  during %-24s %8s /s, p50 / p99 / max %s; cores: %s\n", phaseNames[p]+":",
			commas(int(float64(l.n)/walls[p].Seconds())), all3(l), cores[p])
	}

	// The documents kept, counted now that the load has stopped.
	fullCount, err := countInGzip(full.kept, jsonInstancePattern)
	if err != nil {
		return fmt.Errorf("the first full fetch: %v", err)
	}
	deltaCount, err := countInGzip(deltas.firstBody, jsonInstancePattern)
	if err != nil {
		return fmt.Errorf("the first delta: %v", err)
	}
	fmt.Fprintf(out, "instances in the first full fetch: %s; in the first delta: %s\n", commas(fullCount), commas(deltaCount))
	fmt.Fprintln(out, "one read of each format, during the heartbeats (full JSON gzip and delta JSON gzip were read above):")
	for n := range reads {
		rd := &reads[n]
		if rd.kept != nil {
			if rd.count, err = countInGzip(rd.kept, rd.pattern); err != nil {
				return fmt.Errorf("%s: %v", rd.name, err)
			}
			rd.kept = nil
		}
		fmt.Fprintf(out, "  %-16s %9s in %6.2f s, %s instances; server CPU %.2f s less the heartbeats'; RSS %s, peak %s after\n",
			rd.name, mbf(rd.bytes), rd.took.Seconds(), commas(rd.count), readsCPU(rd.cpu, rd.beats).Seconds(), gb(rd.rss), gb(rd.hwm))
	}

	// One line per target of issue 31.
	fmt.Fprintf(out, "\ntargets (issue 31); the server shares the %d cores with the load (load average now %s):\n", runtime.NumCPU(), loadAverage())
	target := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	fmt.Fprintf(out, "%d concurrent first gzip full fetches: %.2f s (target <= 5 s): %s\n", c.readers, full.wall.Seconds(), target(full.wall <= 5*time.Second))
	afterFirst := "no client read a second delta"
	if later.n > 0 {
		afterFirst = fmt.Sprintf("%.1f ms after each client's first", ms(later.p99))
	}
	fmt.Fprintf(out, "delta p99 until the header: %.1f ms over the %s (target < 100 ms of server time): %s; until the last byte %.1f ms, %s\n",
		ms(heads.p99), c.d, target(heads.p99 < 100*time.Millisecond), ms(all.p99), afterFirst)
	fmt.Fprintf(out, "heartbeat p99: %.1f ms over the run, %.1f ms in the worst phase (%s) (target < 10 ms throughout): %s\n",
		ms(hbAll.p99), ms(worst), worstPhase, target(worst < 10*time.Millisecond))
	fmt.Fprintf(out, "rss: %s at its peak (VmHWM), %s at the end (target <= 4 GB): %s\n", gb(hwm), gb(rssEnd), target(hwm <= 4e9))
	fmt.Fprintf(out, "server CPU per read: first full fetch %.0f ms (one build shared by %d), delta %.2f ms\n",
		ms(fullReads/time.Duration(c.readers)), c.readers, ms(deltaReads/time.Duration(max(1, all.n))))
	if fullCount != c.instances {
		return fmt.Errorf("the first full fetch holds %d instances, not %d", fullCount, c.instances)
	}
	for _, rd := range reads {
		if rd.full && rd.count >= 0 && rd.count != c.instances {
			return fmt.Errorf("%s holds %d instances, not %d", rd.name, rd.count, c.instances)
		}
	}
	return nil
}

// usage is a reading of the CPU used so far: the server's, this
// process's (the load), and the machine's.
type usage struct {
	at                 time.Time
	server, load, busy time.Duration
}

func (r *millionRun) usage() usage {
	b, _ := os.ReadFile("/proc/stat")
	return usage{at: time.Now(), server: r.cpu(), load: cpuTime(), busy: parseMachineBusy(string(b))}
}

// coreUse is the cores used between two readings.
type coreUse struct{ server, load, other float64 }

func (u usage) since(u0 usage) coreUse {
	wall := u.at.Sub(u0.at).Seconds()
	server, load := (u.server-u0.server).Seconds()/wall, (u.load-u0.load).Seconds()/wall
	return coreUse{server: server, load: load, other: max(0, (u.busy-u0.busy).Seconds()/wall-server-load)}
}

func (c coreUse) String() string {
	return fmt.Sprintf("server %.2f, load %.2f, other processes %.2f", c.server, c.load, c.other)
}

// parseMachineBusy reads the CPU time the machine has spent busy (user,
// nice, system, irq, softirq, steal) from the text of /proc/stat.
func parseMachineBusy(text string) time.Duration {
	line, _, _ := strings.Cut(text, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var ticks int64
	for _, k := range []int{1, 2, 3, 6, 7, 8} {
		n, _ := strconv.ParseInt(f[k], 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ
}

// sleep waits d, or until the run is interrupted.
func (r *millionRun) sleep(d time.Duration) error {
	select {
	case <-r.ctx.Done():
		return r.ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// register registers every instance, from c.regConns clients at once,
// and returns how long it took.
func (r *millionRun) register() (time.Duration, error) {
	return registerBulk(r.ctx, "million", r.addr, r.c.instances, r.c.apps, r.c.regConns)
}

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
		cpu0, beats0 := r.cpu(), r.hb.count.Load()
		rd, err := readDoc(r.ctx, client, r.addr, d.path, d.accept, d.gz, d.gz, count)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", d.name, err)
		}
		rd.cpu, rd.beats = r.cpu()-cpu0, r.hb.count.Load()-beats0
		rd.rss, rd.hwm = r.memory()
		rd.name, rd.full, rd.pattern = d.name, d.path == "/eureka/apps/", pat
		out = append(out, rd)
	}
	return out, nil
}

// profileStart starts a CPU profile of the server for a phase, when
// profiling.
func (r *millionRun) profileStart(phase string) error {
	if r.pprof == "" {
		return nil
	}
	_, err := r.pprofGet("/bench/cpu/start")
	return err
}

// profileStop writes the phase's CPU profile and a heap profile to the
// profiles' directory, and notes the Go heap.
func (r *millionRun) profileStop(phase string) error {
	if r.pprof == "" {
		return nil
	}
	cpu, err := r.pprofGet("/bench/cpu/stop")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.c.profile, "cpu-"+phase+".pprof"), cpu, 0o644); err != nil {
		return err
	}
	heap, err := r.pprofGet("/debug/pprof/heap")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.c.profile, "heap-"+phase+".pprof"), heap, 0o644); err != nil {
		return err
	}
	text, err := r.pprofGet("/debug/pprof/heap?debug=1")
	if err != nil {
		return err
	}
	r.heap[phase] = parseMemStats(string(text))
	return nil
}

func (r *millionRun) pprofGet(path string) ([]byte, error) {
	resp, err := http.Get("http://" + r.pprof + path)
	if err != nil {
		return nil, fmt.Errorf("the server's pprof: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("the server's pprof: %s: status %d: %s", path, resp.StatusCode, b)
	}
	return b, err
}

// heapNote is the Go heap at a phase's end, when profiling.
func (r *millionRun) heapNote(phase string) string {
	m, ok := r.heap[phase]
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (Go heap: %s in use, %s allocated, %s released to the OS, next GC at %s)",
		gb(m.heapInuse), gb(m.heapAlloc), gb(m.heapReleased), gb(m.nextGC))
}

// memStats are the runtime.MemStats lines of a heap profile in text.
type memStats struct {
	heapAlloc, heapInuse, heapSys, heapReleased, nextGC, sys uint64
}

// parseMemStats reads the "# Name = value" lines that
// /debug/pprof/heap?debug=1 ends with.
func parseMemStats(text string) memStats {
	var m memStats
	fields := map[string]*uint64{"HeapAlloc": &m.heapAlloc, "HeapInuse": &m.heapInuse, "HeapSys": &m.heapSys,
		"HeapReleased": &m.heapReleased, "NextGC": &m.nextGC, "Sys": &m.sys}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "# "), " = ")
		if p := fields[name]; ok && p != nil {
			*p, _ = strconv.ParseUint(strings.TrimSpace(value), 10, 64)
		}
	}
	return m
}

// parseProcStatus reads VmRSS and VmHWM, in bytes, from the text of
// /proc/<pid>/status; 0 for what it does not hold.
func parseProcStatus(text string) (rss, hwm uint64) {
	for _, line := range strings.Split(text, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(value)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		if name == "VmRSS" {
			rss = kb * 1024
		} else {
			hwm = kb * 1024
		}
	}
	return rss, hwm
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

// all3 is p50 / p99 / max in ms.
func all3(l latencies) string {
	if l.n == 0 {
		return "none"
	}
	return fmt.Sprintf("%.1f / %.1f / %.1f ms", ms(l.p50), ms(l.p99), ms(l.max))
}

// commas writes n with thousands separators: 1,000,000.
func commas(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for k, r := range s {
		if k > 0 && (len(s)-k)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// gb is a size in GB (10^9 bytes).
func gb(b uint64) string { return fmt.Sprintf("%.2f GB", float64(b)/1e9) }

// mbf is a size in MB (10^6 bytes).
func mbf(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

// loadAverage is the machine's load average over the last minute, from
// /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
