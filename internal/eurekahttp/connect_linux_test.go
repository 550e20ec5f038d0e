package eurekahttp

import (
	"context"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stalledAddr returns a loopback address whose listener never accepts and
// whose accept queue is full, so that a new connection attempt hangs: Linux
// drops its SYN.
func stalledAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	for range 16 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return addr // the queue is full
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("the accept queue never filled; cannot stall a connect here")
	return ""
}

func TestConnectTimeout(t *testing.T) {
	addr := stalledAddr(t)
	c := newClient(t, Config{ConnectTimeout: 100 * time.Millisecond})
	start := time.Now()
	_, err := c.Do(context.Background(), parse(t, "http://"+addr+"/eureka/"), Request{Path: "apps/"})
	if !IsTimeout(err) || !strings.Contains(err.Error(), "dial") {
		t.Fatalf("stalled connect: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 4*time.Second {
		t.Errorf("connect took %v with a 100ms connect timeout", elapsed)
	}
}
