package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"time"

	"github.com/eurekagate/eurekagate/internal/proc"
	"github.com/eurekagate/eurekagate/routing"
)

// startBenchRedis starts Debian's redis-server on a free loopback port,
// nothing saved, for the shared limit's target; url "" when it is not
// installed (the target is left out, and said so).
func startBenchRedis() (url string, stop func(), err error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", func() {}, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	p, err := proc.Start(context.Background(), "redis-server", proc.Config{}, bin,
		"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err != nil {
		return "", nil, err
	}
	stop = func() { p.Stop(os.Interrupt, 5*time.Second) }
	if _, err := p.Await(regexp.MustCompile(`Ready to accept connections`), 20*time.Second); err != nil {
		stop()
		return "", nil, err
	}
	return "redis://127.0.0.1:" + port, stop, nil
}

// sharedLimitRules are a per-client shared limit no load reaches, over
// url's Redis: what deciding one costs once its lease is warm.
func sharedLimitRules(url string) (*routing.Rules, func() error, error) {
	s, err := routing.NewSharedLimits(routing.SharedLimitsConfig{URL: url})
	if err != nil {
		return nil, nil, fmt.Errorf("-redis: %v", err)
	}
	rules, err := routing.RulesLimits{Shared: s}.Parse("bench shared limit", []byte("apps:\n  SVC:\n    limits: [{key: client, rate: 1000000000/s, shared: true}]\n"))
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return rules, s.Close, nil
}
