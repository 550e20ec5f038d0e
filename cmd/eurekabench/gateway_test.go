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
		"Caddy eureka_gateway, all on", "Caddy gateway via reverse_proxy", "Caddy reverse_proxy, log+metrics",
		"caddy-all-on/via-reverse_proxy: ours=", "caddy-all-on/caddy-static: ours="} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the output", want)
		}
	}
}
