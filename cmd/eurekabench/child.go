package main

import (
	"context"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/eurekagate/eurekagate/internal/proc"
)

// rerun is how the studies run this binary again, to put a server in a
// process of its own, as it would run in production: the binary, and what
// to add to its environment. In tests the binary is the test binary,
// which TestMain turns into this command when that environment says so.
type rerun struct {
	exe string
	env []string
}

// thisBinary is the rerun of the running binary.
func thisBinary() (rerun, error) {
	exe, err := os.Executable()
	return rerun{exe: exe}, err
}

// child is this binary serving in a process of its own.
type child struct {
	*proc.Process
	line string // the first line it wrote: "ready", or its address
}

// firstLine is the first line a child writes to stdout.
var firstLine = regexp.MustCompile(`^.*$`)

// start runs the binary with args, a command and its flags, and returns
// once the child has written its first line to stdout, which says it
// serves; its stderr is ours.
func (r rerun) start(args ...string) (*child, error) {
	p, err := proc.Start(context.Background(), "eurekabench "+strings.Join(args, " "), proc.Config{Env: r.env, Stderr: os.Stderr}, r.exe, args...)
	if err != nil {
		return nil, err
	}
	c := &child{Process: p}
	m, err := p.Await(firstLine, time.Minute)
	if err != nil {
		c.stop()
		return nil, err
	}
	c.line = strings.TrimSpace(m[0])
	return c, nil
}

func (c *child) pid() int { return c.Pid() }

// stop interrupts the child and waits for it, killing it after 10 s.
func (c *child) stop() { c.Stop(os.Interrupt, 10*time.Second) }

// untilInterrupted is the child's side: a context done when the parent
// stops it (SIGINT, or SIGTERM).
func untilInterrupted() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
