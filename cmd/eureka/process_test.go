package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// process is the command running as a process for a test, its log
// (stderr) and stdout kept, killed at the test's end unless stopped.
type process struct {
	cmd               *exec.Cmd
	logs, stdout      *processLog
	registry, gateway string // base URLs, from the "listening" log lines
	stopped           bool
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
	return startProcessWith(t, life, bin, gateway, func(*exec.Cmd) {}, args...)
}

// startProcessWith is startProcessFor with the command set up by setup
// first (its directory, its environment).
func startProcessWith(t *testing.T, life time.Duration, bin string, gateway bool, setup func(*exec.Cmd), args ...string) *process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), life)
	p := &process{cmd: exec.CommandContext(ctx, bin, args...), logs: new(processLog), stdout: new(processLog)}
	p.cmd.Stderr, p.cmd.Stdout = p.logs, p.stdout
	setup(p.cmd)
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !p.stopped {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
		cancel()
		if t.Failed() {
			t.Logf("the log of %s:\n%s", strings.Join(args, " "), logSummary(p.logs.String(), 40))
		}
	})
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
	if err := p.cmd.Process.Signal(os.Interrupt); err == nil {
		p.stopped = true
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("after SIGINT: %v", err)
		}
	}
}
