package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/proc"
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
	stdout := new(proc.Output)
	cfg.Stdout = stdout
	pr, err := proc.Start(ctx, strings.Join(args, " "), cfg, bin, args...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	p := &process{Process: pr, logs: &processLog{pr.Output}, stdout: &processLog{stdout}}
	t.Cleanup(func() {
		p.Kill()
		cancel()
		if t.Failed() {
			t.Logf("the log of %s:\n%s", p.Name, logSummary(p.logs.String(), 40))
		}
	})
	p.registry = "http://" + fmt.Sprint(p.logs.line(t, "registry listening")["addr"])
	if gateway {
		p.gateway = "http://" + fmt.Sprint(p.logs.line(t, "gateway listening")["addr"])
	}
	return p
}

// processLog is a process's stderr: its JSON log lines.
type processLog struct {
	*proc.Output
}

// line waits up to 10 s for the first whole line whose msg starts with
// msg, and returns its fields.
func (p *processLog) line(t *testing.T, msg string) map[string]any {
	t.Helper()
	m, ok := p.find(msg, 10*time.Second)
	if !ok {
		t.Fatalf("the server did not log %s within 10s:\n%s", msg, p.Tail(2000))
	}
	return m
}

// find waits up to d for the first whole line whose msg starts with msg,
// and returns its fields; false if none came.
func (p *processLog) find(msg string, d time.Duration) (map[string]any, bool) {
	m, err := p.Await(regexp.MustCompile(`^.*"msg":"`+regexp.QuoteMeta(msg)+`.*$`), d) // the whole line
	if err != nil {
		return nil, false
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(m[0]), &fields); err != nil {
		return nil, false
	}
	return fields, true
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
