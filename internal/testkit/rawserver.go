package testkit

import (
	"net"
	"testing"
)

// RawServer listens on a free loopback port and hands each connection it
// accepts to serve, in the goroutine that accepts (serve starts one of
// its own to serve connections side by side), until the test ends: the
// cleanup closes the listener and waits for that goroutine. It returns
// the address it listens on.
func RawServer(t testing.TB, serve func(net.Conn)) *net.TCPAddr {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			serve(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().(*net.TCPAddr)
}
