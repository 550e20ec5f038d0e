package main

import (
	"net"

	"github.com/eurekagate/eurekagate/internal/freeport"
)

// newLoopbackListener listens on a free loopback port: the benchmark never
// sends traffic off this machine.
func newLoopbackListener() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// freePorts finds n free loopback ports for the servers the benchmark
// starts as processes of their own (freeport: below the ephemeral range,
// where no outgoing connection takes one before its server binds it).
func freePorts(n int) ([]string, error) { return freeport.Benchmarks.Loopback(n) }

// serverPort finds a free loopback port for a server that a benchmark's
// server process starts itself (the registry beside a Caddy gateway),
// apart from freePorts' ports, some of which its parent has picked for
// servers it has not started yet.
func serverPort() (string, error) {
	ports, err := freeport.BenchmarkServers.Loopback(1)
	if err != nil {
		return "", err
	}
	return ports[0], nil
}
