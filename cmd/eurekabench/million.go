package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/fixture"
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
func millionCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
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
	return func(out io.Writer, rec *record) error {
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
		return untilStopped(out, func(ctx context.Context, out io.Writer) error { return runMillion(ctx, c, out, rec) })
	}
}

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
	meter meter // reads each phase, into rec
	rec   *record
	res   millionResults
	// the Go heap at each profiled phase's end, when profiling
	heap map[string]memStats
}

func runMillion(ctx context.Context, c millionConfig, out io.Writer, rec *record) (err error) {
	dir, err := os.MkdirTemp("", "eurekabench-million-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	r := &millionRun{ctx: ctx, c: c, out: out, heap: map[string]memStats{}, rec: rec}
	r.meter = meter{rec: rec, servers: func() []int { return []int{r.node.pid()} }}
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

// millionInstance is the n-th instance of the study: fixture's
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
