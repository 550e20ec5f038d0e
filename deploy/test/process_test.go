package deploytest

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/proc"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// process is a command the test runs: an image's entrypoint, a binary
// with the chart's configuration.
type process struct {
	*proc.Process
	out *proc.Output // its stdout and stderr
}

// start runs name with args and env (only env); the test's end stops it
// with SIGTERM, as Kubernetes does, and waits for it.
func start(t *testing.T, env []string, name string, args ...string) *process {
	t.Helper()
	pr, err := proc.Start(context.Background(), name, proc.Config{Env: env, CleanEnv: true}, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pr.Signal(syscall.SIGTERM)
		if pr.Wait(20*time.Second) == proc.ErrRunning {
			pr.Kill()
			t.Errorf("%s %s did not stop within 20 s of SIGTERM:\n%s", name, strings.Join(args, " "), pr.String())
		}
	})
	return &process{Process: pr, out: pr.Output}
}

func (p *process) exited() bool { return p.Exited() }

// waitFor200 polls url until it answers 200, failing the test if the
// process exits first or 30 s pass.
func (p *process) waitFor200(t *testing.T, url string) {
	t.Helper()
	p.waitFor(t, "GET "+url+" answers 200", func() bool {
		code, _ := get(url)
		return code == 200
	})
}

// waitFor polls cond until it holds, failing the test if the process
// exits first or 30 s pass.
func (p *process) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.EventuallyEvery(t, 30*time.Second, 50*time.Millisecond, what, func() bool {
		if p.exited() {
			t.Fatalf("%s exited: %s", p.Name, p.out.String())
		}
		return cond()
	})
}
