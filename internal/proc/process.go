// Package proc runs commands as processes of their own for the tests and
// for cmd/eurekabench: a process's output kept as lines (and in a log
// file when asked), a wait for a line with a deadline, a stop by a signal
// with a grace period before the kill, and go build. It does not import
// testing: the benchmark links it; internal/testkit wraps it for tests.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"time"
)

// Config is how a process is started. The zero value runs the command in
// this process's directory and environment, its stdout and stderr kept
// in memory only.
type Config struct {
	Dir string   // the working directory; "" for this process's
	Env []string // added to this process's environment
	// CleanEnv makes Env the whole environment: nothing inherited.
	CleanEnv bool
	// LogFile, when not "", receives the output too, created (or
	// truncated) at the start.
	LogFile string
	// Stdout and Stderr, when not nil, receive that stream instead of the
	// kept output (a server's address on stdout, its logs on stderr).
	Stdout, Stderr io.Writer
	// Group runs the process in a process group of its own, which its
	// signals and its kill reach whole: a shell and what it started.
	Group bool
}

// ErrRunning is what Wait returns when the process outlives its wait.
var ErrRunning = errors.New("still running")

// Process is a command running as a process of its own. One goroutine
// waits for it; it ends when the process has exited and its output is
// read, which Stop, Kill and Wait wait for.
type Process struct {
	Name string // for errors: "node-1", "the Java server"
	*Output
	cmd   *exec.Cmd
	group bool
	done  chan struct{} // closed once the process has exited and been waited for
	err   error         // what exec's Wait returned, once done is closed
}

// Start runs bin with args, as name; the process is killed when ctx is
// done.
func Start(ctx context.Context, name string, cfg Config, bin string, args ...string) (*Process, error) {
	p := &Process{Name: name, Output: new(Output), cmd: exec.CommandContext(ctx, bin, args...), done: make(chan struct{})}
	p.cmd.Dir = cfg.Dir
	switch {
	case cfg.CleanEnv:
		p.cmd.Env = append([]string{}, cfg.Env...)
	case len(cfg.Env) > 0:
		p.cmd.Env = append(os.Environ(), cfg.Env...)
	}
	var out io.Writer = p.Output
	var file *os.File
	if cfg.LogFile != "" {
		f, err := os.Create(cfg.LogFile)
		if err != nil {
			return nil, err
		}
		file, out = f, io.MultiWriter(p.Output, f)
	}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if cfg.Stdout != nil {
		p.cmd.Stdout = cfg.Stdout
	}
	if cfg.Stderr != nil {
		p.cmd.Stderr = cfg.Stderr
	}
	if cfg.Group {
		p.group = true
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		p.cmd.Cancel = func() error { return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }
	}
	// A grandchild that keeps the output open (a daemon's workers) must
	// not hold Wait once the process itself has exited.
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		if file != nil {
			file.Close()
		}
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		if file != nil {
			file.Close()
		}
		p.Output.close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and been waited for.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the process, or to its group with Config.Group
// (SIGSTOP and SIGCONT included); it fails once the process has exited.
func (p *Process) Signal(sig os.Signal) error {
	if s, ok := sig.(syscall.Signal); ok && p.group {
		return syscall.Kill(-p.cmd.Process.Pid, s)
	}
	return p.cmd.Process.Signal(sig)
}

// Wait waits up to d for the process to exit and returns what exec's Wait
// returned (nil for an exit status of 0), or ErrRunning if it has not
// exited by then.
func (p *Process) Wait(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return p.err
	case <-t.C:
		return ErrRunning
	}
}

// Stop sends sig and waits up to grace for the process to exit, then
// kills it; it returns what exec's Wait returned (the kill's error when
// it was killed). A process that has exited already is not signalled.
func (p *Process) Stop(sig os.Signal, grace time.Duration) error {
	if p.Exited() {
		return p.err
	}
	p.Signal(sig) // it may exit meanwhile: Wait says how it did
	if err := p.Wait(grace); err != ErrRunning {
		return err
	}
	p.Kill()
	return p.err
}

// Kill kills the process (its group with Config.Group) and waits for it.
func (p *Process) Kill() {
	p.Signal(os.Kill)
	<-p.done
}

// Await waits up to d for a line of the output that matches re, and
// returns the submatches of the first that does; its error, if the
// process exits first or d passes, names the process and ends with the
// output's last 2,000 bytes.
func (p *Process) Await(re *regexp.Regexp, d time.Duration) ([]string, error) {
	m, err := p.Output.Await(re, d)
	switch {
	case errors.Is(err, errClosed):
		return nil, fmt.Errorf("%s exited (%v) before it logged %q:\n%s", p.Name, p.err, re, p.Tail(2000))
	case err != nil:
		return nil, fmt.Errorf("%s did not log %q within %v:\n%s", p.Name, re, d, p.Tail(2000))
	}
	return m, nil
}
