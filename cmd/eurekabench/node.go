package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/eurekagate/eurekagate/internal/proc"
)

// node is a server process of a study (cmd/eureka, or a Java peer), its
// output kept and in a log file of its own.
type node struct {
	name string
	*proc.Process
	registry string // host:port
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
	p, err := proc.Start(context.Background(), name, proc.Config{Env: env, LogFile: filepath.Join(dir, name+".log")}, bin, args...)
	if err != nil {
		return nil, err
	}
	return &node{name: name, Process: p}, nil
}

// pid is the node's process id.
func (n *node) pid() int { return n.Pid() }

// stop interrupts the node, as Ctrl-C does, and waits for it, killing it
// after 10 s.
func (n *node) stop() { n.Stop(os.Interrupt, 10*time.Second) }

// exited reports whether the node has exited.
func (n *node) exited() bool { return n.Exited() }

// await waits up to d for a line of the node's log to match re.
func (n *node) await(re *regexp.Regexp, d time.Duration) error {
	_, err := n.Await(re, d)
	return err
}

// logTail is the end of the node's log, for an error.
func (n *node) logTail() string { return n.Tail(2000) }
