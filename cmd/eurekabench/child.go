package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
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
	cmd  *exec.Cmd
	line string // the first line it wrote: "ready", or its address
}

// start runs the binary with args, a command and its flags, and returns
// once the child has written its first line to stdout, which says it
// serves; the rest of its stdout is discarded, its stderr is ours.
func (r rerun) start(args ...string) (*child, error) {
	cmd := exec.Command(r.exe, args...)
	cmd.Env = append(os.Environ(), r.env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd}
	first := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		c.line = strings.TrimSpace(line)
		first <- err
		io.Copy(io.Discard, stdout)
	}()
	select {
	case err = <-first:
	case <-time.After(time.Minute):
		err = errors.New("no word from it in a minute")
	}
	if err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// stop interrupts the child and waits for it, killing it after 10 s.
func (c *child) stop() { stopProcess(c.cmd, os.Interrupt, 10*time.Second) }

// stopProcess signals cmd to stop and waits for it, killing it after
// grace.
func stopProcess(cmd *exec.Cmd, sig os.Signal, grace time.Duration) {
	cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		cmd.Process.Kill()
		<-done
	}
}

// untilInterrupted is the child's side: a context done when the parent
// stops it (SIGINT, or SIGTERM).
func untilInterrupted() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
