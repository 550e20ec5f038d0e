package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/internal/proc"
	trafficmetrics "github.com/eurekagate/eurekagate/traffic/metrics"
)

// The gateway study's anchors and anchorComparisons: HAProxy beside nginx, and
// each anchorComparison of ours against an anchor printed in one form,
//
//	NAME: ours=X anchor=Y ratio=Z
//
// for the requests per second (NAME), the proxy's CPU per request
// (NAME.cpu, µs), the part of it in the kernel (NAME.sys, µs: system
// time, which user-space cuts cannot lower) and the p99 latency
// (NAME.p99, ms), so that a script
// reads them alike. A target another study adds is one more row of
// gatewayComparisons' list.

// anchorComparison is ours against an anchor, by name.
type anchorComparison struct {
	name         string
	ours, anchor *target
}

// gatewayComparisons are the anchorComparisons among the targets the run
// has (an anchor not installed drops its rows).
func gatewayComparisons(every, bare, nginx, nginxLog, haproxy *target) []anchorComparison {
	var cs []anchorComparison
	for _, c := range []anchorComparison{
		{"every-feature/nginx-log", every, nginxLog},
		{"every-feature/haproxy", every, haproxy},
		{"bare/nginx", bare, nginx},
		{"bare/nginx-log", bare, nginxLog},
		{"bare/haproxy", bare, haproxy},
		{"every-feature/bare", every, bare},
	} {
		if c.ours != nil && c.anchor != nil {
			cs = append(cs, c)
		}
	}
	return cs
}

// printComparison prints c's four lines: of round r (1-based), or of all
// the rounds when r is 0: the rates summed over the rounds (the ratio of
// sums, as the issue reads them), the CPU per request and the p99 as
// their medians over the rounds.
func printComparison(out io.Writer, c anchorComparison, r int) {
	pick := func(xs []float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		if r > 0 {
			return xs[r-1]
		}
		return median(xs)
	}
	sum := func(xs []float64) float64 {
		if r > 0 {
			return xs[r-1]
		}
		var s float64
		for _, x := range xs {
			s += x
		}
		return s
	}
	line := func(name string, ours, anchor float64, format string) {
		if ours <= 0 || anchor <= 0 {
			return
		}
		fmt.Fprintf(out, "  %s: ours="+format+" anchor="+format+" ratio=%.2f\n", name, ours, anchor, ours/anchor)
	}
	line(c.name, sum(c.ours.rates), sum(c.anchor.rates), "%.0f")
	line(c.name+".cpu", 1e6*pick(c.ours.cpu), 1e6*pick(c.anchor.cpu), "%.1f")
	line(c.name+".sys", 1e6*pick(c.ours.sys), 1e6*pick(c.anchor.sys), "%.1f")
	line(c.name+".p99", 1e3*pick(c.ours.p99), 1e3*pick(c.anchor.p99), "%.2f")
}

// startHAProxy runs HAProxy in the foreground (-db) with a generated
// configuration in a directory of its own under the temporary directory:
// two threads (nbthread 2, the machine's cores), connections to the
// backend kept and shared (http-reuse always), keep-alive with the
// clients, no log (HAProxy logs through syslog or a pipe, a write per
// line, where nginx buffers its file: without a log it is the faster
// peer). It is never a system service; stop soft-stops it and waits.
func startHAProxy(path, listen, backend string) (stop func(), pid int, err error) {
	dir, err := os.MkdirTemp("", "eurekabench-haproxy-")
	if err != nil {
		return nil, 0, err
	}
	conf := fmt.Sprintf(`global
	nbthread 2
	maxconn 8192

defaults
	mode http
	option http-keep-alive
	http-reuse always
	timeout connect 5s
	timeout client 30s
	timeout server 30s
	timeout http-keep-alive 30s

frontend bench
	bind %s
	default_backend backend

backend backend
	server b1 %s
`, listen, backend)
	confPath := filepath.Join(dir, "haproxy.cfg")
	// SIGUSR1: HAProxy's soft stop.
	return startAnchor(dir, confPath, conf, listen, syscall.SIGUSR1, "", path, "-db", "-f", confPath)
}

// startAnchor writes an anchor's configuration conf to confPath in dir,
// runs cmd, and returns when it answers on listen; stop sends it sig (its
// graceful stop), waits for it and removes dir. errorLog, when set, is
// the file whose text an anchor that does not answer is reported with.
func startAnchor(dir, confPath, conf, listen string, sig syscall.Signal, errorLog string, cmd ...string) (stop func(), pid int, err error) {
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, 0, err
	}
	p, err := proc.Start(context.Background(), filepath.Base(cmd[0]), proc.Config{Stdout: os.Stderr, Stderr: os.Stderr},
		cmd[0], cmd[1:]...)
	if err != nil {
		os.RemoveAll(dir)
		return nil, 0, err
	}
	stop = func() {
		p.Stop(sig, 10*time.Second)
		os.RemoveAll(dir)
	}
	if err := awaitAnswer(listen, 10*time.Second); err != nil {
		var log []byte
		if errorLog != "" {
			log, _ = os.ReadFile(errorLog)
		}
		stop()
		return nil, 0, fmt.Errorf("%v: %s", err, log)
	}
	return stop, p.Pid(), nil
}

// scrapeGatewayMetrics registers g's traffic metrics as cmd/eureka does
// with -gateway and reads them once, so that the every-feature gateway
// runs what a user's does (the collectors are read at scrape time).
func scrapeGatewayMetrics(g *gateway.Gateway) error {
	t := trafficmetrics.NewTraffic(g.Traffic(), trafficmetrics.BalancerHealth(g.Router().Config().Balancer), "eureka")
	t.AccessLogDropped = g.AccessLogDropped
	reg := prometheus.NewRegistry()
	if err := reg.Register(t); err != nil {
		return err
	}
	_, err := reg.Gather()
	return err
}
