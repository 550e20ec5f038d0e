package main

import "net"

// newLoopbackListener listens on a free loopback port: the benchmark never
// sends traffic off this machine.
func newLoopbackListener() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// freePorts finds n free loopback ports.
func freePorts(n int) ([]string, error) {
	var out []string
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := newLoopbackListener()
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		out = append(out, port)
	}
	return out, nil
}
