package main

import "net"

// newLoopbackListener listens on a free loopback port: the benchmark never
// sends traffic off this machine.
func newLoopbackListener() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
