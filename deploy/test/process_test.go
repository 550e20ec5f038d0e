package deploytest

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// process is a command the test runs: an image's entrypoint, a binary
// with the chart's configuration.
type process struct {
	cmd  *exec.Cmd
	out  *testkit.Output
	done chan struct{}
}

// start runs name with args and env (only env); the test's end stops it
// with SIGTERM, as Kubernetes does, and waits for it.
func start(t *testing.T, env []string, name string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(name, args...), out: new(testkit.Output), done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
			t.Errorf("%s %s did not stop within 20 s of SIGTERM:\n%s", name, strings.Join(args, " "), p.out.String())
		}
	})
	return p
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

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
			t.Fatalf("%s exited: %s", p.cmd.Path, p.out.String())
		}
		return cond()
	})
}
