package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/proc"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// process is the command running as a process for a test, its log
// (stderr) and stdout kept, killed at the test's end unless stopped.
type process struct {
	*proc.Process
	logs, stdout      *processLog
	registry, gateway string // base URLs, from the "listening" log lines
}

// startProcess runs bin with args and waits until it logs that its
// registry (and, with -gateway, its gateway) listens.
func startProcess(t *testing.T, bin string, gateway bool, args ...string) *process {
	t.Helper()
	return startProcessFor(t, 30*time.Second, bin, gateway, args...)
}

// startProcessFor is startProcess for a process that lives up to life
// (the two-region test's outlive 30 s on a loaded machine).
func startProcessFor(t *testing.T, life time.Duration, bin string, gateway bool, args ...string) *process {
	t.Helper()
	return startProcessWith(t, life, bin, gateway, proc.Config{}, args...)
}

// startProcessWith is startProcessFor with the process's directory and
// environment from cfg (its stdout is kept apart from its log).
func startProcessWith(t *testing.T, life time.Duration, bin string, gateway bool, cfg proc.Config, args ...string) *process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), life)
	t.Cleanup(cancel)
	stdout := new(proc.Output)
	cfg.Stdout = stdout
	p := &process{stdout: &processLog{stdout}}
	p.Process = testkit.StartProcess(t, ctx, strings.Join(args, " "), cfg, os.Kill, 0, bin, args...)
	p.logs = &processLog{p.Output}
	p.registry = "http://" + fmt.Sprint(p.logs.line(t, "registry listening")["addr"])
	if gateway {
		p.gateway = "http://" + fmt.Sprint(p.logs.line(t, "gateway listening")["addr"])
	}
	return p
}

// stop interrupts the process, as Ctrl-C does, and fails the test unless
// it exits cleanly.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.Signal(os.Interrupt); err == nil {
		if err := p.Wait(time.Hour); err != nil { // bounded by the process's life
			t.Errorf("after SIGINT: %v", err)
		}
	}
}
