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
