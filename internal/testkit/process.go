package testkit

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/proc"
)

// StartProcess runs bin with args as name for the test (proc.Start with
// ctx); when the test ends the process is stopped with stop, killed after
// grace (os.Kill kills it at once), and its output logged if the test
// failed.
func StartProcess(t testing.TB, ctx context.Context, name string, cfg proc.Config, stop os.Signal, grace time.Duration, bin string, args ...string) *proc.Process {
	t.Helper()
	p, err := proc.Start(ctx, name, cfg, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop(stop, grace)
		if t.Failed() {
			t.Logf("---- output of %s ----\n%s", name, p.String())
		}
	})
	return p
}

// AwaitLine waits up to d for a line of p's output to match re, returns
// its submatches, and fails the test if none does.
func AwaitLine(t testing.TB, p *proc.Process, re string, d time.Duration) []string {
	t.Helper()
	m, err := p.Await(regexp.MustCompile(re), d)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
