package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The gateway study re-executes its binary to run each server in a process
// of its own; in tests that binary is the test binary, which serves the
// role asked for instead of running the tests.
func TestMain(m *testing.M) {
	if os.Getenv("EUREKABENCH_GATEWAY_CHILD") != "" {
		os.Exit(gatewayCommand(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// The gateway study runs end to end, briefly, with the in-process load
// (and nginx when it is installed). Its figures are not checked here.
func TestGatewayStudySmall(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := gatewayBenchConfig{d: 300 * time.Millisecond, warmup: 50 * time.Millisecond, conns: 4, rounds: 1,
		exe: exe, childEnv: []string{"EUREKABENCH_GATEWAY_CHILD=1"}}
	c.nginx, _ = exec.LookPath("nginx")
	var out strings.Builder
	if err := runGatewayBench(c, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	for _, want := range []string{"gateway, by name", "Caddy eureka_gateway, by name", "gateway / Caddy", "gateway without loops"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the output", want)
		}
	}
}
