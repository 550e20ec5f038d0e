package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The java study (issue 32): the Spring Cloud Netflix Eureka Server and
// Spring Cloud Gateway beside our standalone server and gateways, in one
// run, under the same load from the same generator (this process, or wrk
// for the gateways), the two servers taking turns in one-second slices as
// the gateway study's targets do, so that whatever else the machine runs
// weighs on both alike. The Java peers are the interop suite's projects
// (interop/java), built with Maven into a temporary directory; cmd/eureka
// is built there too, with the pprof overlay of the million study (for
// /bench/gc).
//
// The Java processes run with the JVM settings of jvmFlags, and the
// server with its production defaults, but for these, each of which only
// makes the run shorter or keeps it on loopback:
//
//   - standalone (the registry phases, the propagation and the gateway):
//     its own URL as the default zone, register-with-eureka=false and
//     fetch-registry=false, as Spring's documentation sets up a
//     standalone server;
//   - in the two-node cluster: each node's address as its hostname and
//     my-url (how it tells itself from its peer on one machine),
//     registry-sync-retry-wait-ms=1000 (a node whose peer holds nothing
//     waits 5 x 30 s at start otherwise), and Netflix's peer timeouts
//     (peer-node-connect-timeout-ms=1000, peer-node-read-timeout-ms=5000)
//     in place of Spring's 200 ms, which a batch of replications on two
//     shared cores exceeds: a misconfiguration for this machine, not a
//     property of the server.
//
// The instances are million's Spring-shaped ones, over 100 apps, with a
// lease of an hour so that none expires between the phases that renew it.
//
//	go run ./cmd/eurekabench java

// javaConfig is the study's settings.
type javaConfig struct {
	apps, small, large int           // instances over apps: the 10k and 50k rows
	conc, readConc     int           // connections for writes and heartbeats, for reads
	slices             int           // one-second slices a side per measurement
	warmup             time.Duration // per side, per measurement, before its slices
	changes            int           // changes per second during the delta reads
	trials             int           // propagation trials
	stagger            time.Duration // between the propagation trials' registrations
	cluster            int           // registrations of the cluster row
	gwDuration         time.Duration // per gateway measurement
	gwRounds, gwConns  int
	wrk, nginx         string
	keep               bool     // keep the temporary directory (logs, jars)
	phases             []string // the phases to run; all by default
}

func javaCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	c := javaConfig{apps: 100}
	fs.IntVar(&c.small, "instances", 10_000, "instances of the 10k rows (registrations, heartbeats, fetches, memory)")
	fs.IntVar(&c.large, "large", 50_000, "instances of the 50k rows (heartbeats, memory)")
	fs.IntVar(&c.conc, "connections", 64, "connections of the registrations and heartbeats")
	fs.IntVar(&c.readConc, "read-connections", 16, "connections of the full and delta fetches")
	fs.IntVar(&c.slices, "slices", 5, "one-second slices each server gets per measurement")
	fs.DurationVar(&c.warmup, "warmup", 3*time.Second, "load each server gets before a measurement, uncounted")
	fs.IntVar(&c.changes, "changes-per-second", 50, "changes while the deltas are read")
	fs.IntVar(&c.trials, "trials", 10, "propagation trials")
	fs.DurationVar(&c.stagger, "stagger", 3*time.Second, "time between the propagation trials' registrations (10 x 3 s spread them over the Spring client's 30 s fetch interval)")
	fs.IntVar(&c.cluster, "cluster", 10_000, "registrations on one node of the two-node clusters")
	fs.DurationVar(&c.gwDuration, "gateway-duration", 5*time.Second, "how long wrk loads a gateway per round")
	fs.IntVar(&c.gwRounds, "gateway-rounds", 3, "rounds of the gateway comparison")
	fs.IntVar(&c.gwConns, "gateway-connections", 32, "wrk's connections")
	fs.BoolVar(&c.keep, "keep", false, "keep the temporary directory with the logs and the builds, and say where it is")
	phases := fs.String("phases", strings.Join(javaPhases, ","), "the phases to run, separated by commas")
	return func(out io.Writer, rec *record) error {
		c.phases = strings.Split(*phases, ",")
		for _, p := range c.phases {
			if !slices.Contains(javaPhases, p) {
				return fmt.Errorf("-phases: no phase %q (the phases: %s)", p, strings.Join(javaPhases, ", "))
			}
		}
		if c.small < c.apps || c.large < c.small || c.cluster < c.apps || c.slices < 1 || c.trials < 1 || c.changes < 1 || c.gwRounds < 1 {
			return errors.New("-instances, -large and -cluster need at least 100 (the apps), -large at least -instances; -slices, -trials, -changes-per-second and -gateway-rounds at least 1")
		}
		for _, tool := range []string{"java", "mvn", "jcmd", "wrk"} {
			if _, err := exec.LookPath(tool); err != nil {
				return fmt.Errorf("%s not found: the study needs a JDK 17 with Maven, and wrk (apt-get install wrk)", tool)
			}
		}
		c.wrk, _ = exec.LookPath("wrk")
		c.nginx, _ = exec.LookPath("nginx")
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE) // see millionCommand
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		defer stop()
		err := runJava(ctx, c, out)
		if ctx.Err() != nil {
			return errors.New("interrupted; every process it started has stopped")
		}
		return err
	}
}

// javaPhases are the study's phases, in the order they run.
var javaPhases = []string{"registries", "propagation", "clusters", "gateways"}

// comparison is one line of the study's last part.
type comparison struct {
	name         string
	ours, java   float64
	unit         string // "/s", "MB", "µs", "s"
	lessIsBetter bool   // memory, CPU and time: the ratio is java / ours
}

// String is the line: NAME: ours=X java=Y ratio=Z, the ratio how many
// times better ours is (below 1: the Java side's better).
func (c comparison) String() string {
	ratio := c.ours / c.java
	if c.lessIsBetter {
		ratio = c.java / c.ours
	}
	return fmt.Sprintf("%s: ours=%s java=%s ratio=%.2f", c.name, c.value(c.ours), c.value(c.java), ratio)
}

func (c comparison) value(v float64) string {
	switch c.unit {
	case "/s":
		return fmt.Sprintf("%.0f/s", v)
	case "MB":
		return fmt.Sprintf("%.0fMB", v/1e6)
	case "µs":
		return fmt.Sprintf("%.1fµs", v*1e6)
	case "s":
		if v < 1 {
			return fmt.Sprintf("%.1fms", v*1e3)
		}
		return fmt.Sprintf("%.2fs", v)
	}
	return fmt.Sprint(v)
}

// javaRun is one run's directory, builds and findings.
type javaRun struct {
	ctx     context.Context
	c       javaConfig
	out     io.Writer
	dir     string
	eureka  string // our cmd/eureka
	jars    javaJars
	results []comparison
}

func (r *javaRun) compare(name string, ours, java float64, unit string, lessIsBetter bool) {
	r.results = append(r.results, comparison{name, ours, java, unit, lessIsBetter})
}

func runJava(ctx context.Context, c javaConfig, out io.Writer) error {
	began := time.Now()
	dir, done, err := workDir("java", c.keep, out)
	if err != nil {
		return err
	}
	defer done()
	r := &javaRun{ctx: ctx, c: c, out: out, dir: dir}
	fmt.Fprintf(out, "eurekabench java: %d CPUs, the JVM %s, %d instances over %d apps and %d, %d slices of 1 s a server per measurement after %v of warm-up\n",
		runtime.NumCPU(), javaVersion(), c.small, c.apps, c.large, c.slices, c.warmup)

	start := time.Now()
	if r.eureka, err = buildEureka(ctx, dir, dir); err != nil {
		return err
	}
	goBuild := time.Since(start)
	start = time.Now()
	if r.jars, err = buildJars(ctx, dir); err != nil {
		return err
	}
	fmt.Fprintf(out, "built cmd/eureka in %.0f s and the three Java projects with Maven in %.0f s\n", goBuild.Seconds(), time.Since(start).Seconds())

	for k, phase := range []func() error{r.registries, r.propagation, r.clusters, r.gateways} {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !slices.Contains(c.phases, javaPhases[k]) {
			continue
		}
		if err := phase(); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\nthe comparisons (ratio: how many times ours is better; below 1 the Java side is), after %.0f s\n", time.Since(began).Seconds())
	for _, cmp := range r.results {
		fmt.Fprintln(out, cmp)
	}
	return nil
}

// javaVersion is the first line of java -version.
func javaVersion() string {
	outp, _ := exec.Command("java", "-version").CombinedOutput()
	line, _, _ := strings.Cut(string(outp), "\n")
	return strings.TrimSpace(line)
}
