package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The gateway study runs end to end, briefly, with the in-process load
// (and nginx when it is installed), each server a process of the test
// binary. Its figures are not checked here.
func TestGatewayStudySmall(t *testing.T) {
	c := gatewayBenchConfig{d: 300 * time.Millisecond, warmup: 50 * time.Millisecond, conns: 4, rounds: 1, servers: testServers(t)}
	c.nginx, _ = exec.LookPath("nginx")
	c.haproxy, _ = exec.LookPath("haproxy")
	var out strings.Builder
	rec := newRecord("gateway", nil)
	if err := runGatewayBench(c, &out, rec); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	for _, name := range []string{"gateway, by name.rate.1", "direct to the backend.rate.1", "Caddy eureka_gateway, by name.rate.1"} {
		if v, ok := rec.figure(name); !ok || v <= 0 {
			t.Errorf("recorded %s: %v (%v)", name, v, ok)
		}
	}
	// The proxy's CPU is in clock ticks: a short round may read none.
	if v, ok := rec.figure("gateway, by name.cpu.1"); ok && v <= 0 {
		t.Errorf("recorded CPU %v", v)
	}
	if len(rec.Phases) != 1 || rec.Phases[0].Name != "round 1" {
		t.Errorf("phases %+v", rec.Phases)
	}
	for _, want := range []string{"gateway, by name", "Caddy eureka_gateway, by name", "Caddy reverse_proxy, static",
		"gateway / Caddy", "Caddy eureka_gateway / static", "gateway without loops", "gateway, 20 traffic rules", "gateway, 20 rules / no rules", "gateway, no metrics, no ids", "gateway / no metrics, no ids", "gateway, access log to a file", "gateway, access log / without",
		"gateway, a per-client limit", "gateway, a limit / without",
		"gateway, every feature on", "every-feature/bare: ours=", "every-feature/bare.cpu: ours=", "every-feature/bare.p99: ours=",
		"Caddy eureka_gateway, all on", "Caddy gateway via reverse_proxy", "Caddy reverse_proxy, log+metrics",
		"caddy-all-on/via-reverse_proxy: ours=", "caddy-all-on/caddy-static: ours=", "Caddy, the least a proxy handler does", "caddy-all-on/caddy-floor: ours="} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the output", want)
		}
	}
	anchors := map[string][]string{
		c.nginx:   {"nginx, access log to a file", "every-feature/nginx-log: ours=", "bare/nginx: ours=", "caddy-floor/nginx-log: ours="},
		c.haproxy: {"HAProxy, static upstream", "every-feature/haproxy: ours=", "bare/haproxy: ours="},
	}
	for path, wants := range anchors {
		for _, want := range wants {
			if path != "" && !strings.Contains(out.String(), want) {
				t.Errorf("no %q in the output", want)
			}
		}
	}
	if v, ok := rec.figure("gateway, every feature on.p99.1"); !ok || v <= 0 {
		t.Errorf("recorded p99 %v (%v)", v, ok)
	}
}

// A comparison's lines: a round's figures, and over the rounds the ratio
// of the summed rates with the medians of CPU and p99.
func TestPrintComparison(t *testing.T) {
	ours := &target{rates: []float64{100, 300, 200}, cpu: []float64{10e-6, 30e-6, 20e-6}, sys: []float64{8e-6, 24e-6, 16e-6}, p99: []float64{1e-3, 3e-3, 2e-3}}
	anchor := &target{rates: []float64{200, 200, 200}, cpu: []float64{20e-6, 20e-6, 40e-6}, sys: []float64{16e-6, 16e-6, 32e-6}, p99: []float64{2e-3, 2e-3, 2e-3}}
	var round, all strings.Builder
	printComparison(&round, anchorComparison{"x/y", ours, anchor}, 2)
	printComparison(&all, anchorComparison{"x/y", ours, anchor}, 0)
	if want := "  x/y: ours=300 anchor=200 ratio=1.50\n  x/y.cpu: ours=30.0 anchor=20.0 ratio=1.50\n  x/y.sys: ours=24.0 anchor=16.0 ratio=1.50\n  x/y.p99: ours=3.00 anchor=2.00 ratio=1.50\n"; round.String() != want {
		t.Errorf("round 2:\n%s\nwant\n%s", round.String(), want)
	}
	if want := "  x/y: ours=600 anchor=600 ratio=1.00\n  x/y.cpu: ours=20.0 anchor=20.0 ratio=1.00\n  x/y.sys: ours=16.0 anchor=16.0 ratio=1.00\n  x/y.p99: ours=2.00 anchor=2.00 ratio=1.00\n"; all.String() != want {
		t.Errorf("all rounds:\n%s\nwant\n%s", all.String(), want)
	}
}

// -anchors measures the anchors, the two gateways they compare with and
// Caddy's with every feature on (the Caddy target is in the same
// run), and nothing of the rest of the study.
func TestGatewayStudyAnchorsOnly(t *testing.T) {
	c := gatewayBenchConfig{d: 300 * time.Millisecond, warmup: 50 * time.Millisecond, conns: 4, rounds: 1, servers: testServers(t), anchors: true}
	c.nginx, _ = exec.LookPath("nginx")
	c.haproxy, _ = exec.LookPath("haproxy")
	var out strings.Builder
	if err := runGatewayBench(c, &out, newRecord("gateway", nil)); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	for _, want := range []string{"gateway, by name", "gateway, every feature on", "every-feature/bare: ours=", "Caddy eureka_gateway, all on", "caddy-all-on/via-reverse_proxy: ours="} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the output", want)
		}
	}
	for _, unwanted := range []string{"Caddy eureka_gateway, by name", "Caddy reverse_proxy, static", "20 traffic rules", "gateway / nginx", "reference"} {
		if strings.Contains(out.String(), unwanted) {
			t.Errorf("%q in the output", unwanted)
		}
	}
}
