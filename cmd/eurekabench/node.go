package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"
)

// node is a server process of a study (cmd/eureka, or a Java peer), its
// output in a log file of its own.
type node struct {
	name     string
	cmd      *exec.Cmd
	done     chan struct{} // closed once it has exited and been waited for
	log      string        // its stdout and stderr
	registry string        // host:port
}

// startEureka runs cmd/eureka (bin) serving the registry on registry,
// with args, its output to a log file in dir.
func startEureka(bin, dir, name, registry string, args ...string) (*node, error) {
	n, err := startNode(dir, name, nil, bin, append([]string{"-addr", registry}, args...)...)
	if n != nil {
		n.registry = registry
	}
	return n, err
}

// startNode runs bin with args, and env added to this process's
// environment, its output to dir/<name>.log.
func startNode(dir, name string, env []string, bin string, args ...string) (*node, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	n := &node{name: name, cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() { cmd.Wait(); close(n.done) }()
	return n, nil
}

// pid is the node's process id.
func (n *node) pid() int { return n.cmd.Process.Pid }

// stop interrupts the node, as Ctrl-C does, and waits for it, killing it
// after 10 s.
func (n *node) stop() {
	n.cmd.Process.Signal(os.Interrupt)
	select {
	case <-n.done:
	case <-time.After(10 * time.Second):
		n.cmd.Process.Kill()
		<-n.done
	}
}

// exited reports whether the node has exited.
func (n *node) exited() bool {
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}

// await waits up to d for a line of the node's log to match re.
func (n *node) await(re *regexp.Regexp, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if b, _ := os.ReadFile(n.log); re.Match(b) {
			return nil
		}
		switch {
		case n.exited():
			return fmt.Errorf("%s exited before it logged %q:\n%s", n.name, re, n.logTail())
		case time.Now().After(deadline):
			return fmt.Errorf("%s did not log %q within %v:\n%s", n.name, re, d, n.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// logTail is the end of the node's log, for an error.
func (n *node) logTail() string {
	b, _ := os.ReadFile(n.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
