package freeport

import (
	"net"
	"strconv"
	"testing"
)

// The ports are distinct, in their range, and free: a server binds each.
func TestLoopbackPortsAreFreeAndBelowTheEphemeralRange(t *testing.T) {
	ports, err := Loopback(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range ports {
		n, err := strconv.Atoi(p)
		if err != nil || n < Lowest || n > Highest || seen[p] {
			t.Fatalf("port %q (of %v)", p, ports)
		}
		seen[p] = true
		ln, err := net.Listen("tcp", "127.0.0.1:"+p)
		if err != nil {
			t.Fatalf("port %s is not free: %v", p, err)
		}
		defer ln.Close()
	}
}

// A port that is taken is never returned.
func TestLoopbackSkipsPortsInUse(t *testing.T) {
	var held []net.Listener
	defer func() {
		for _, ln := range held {
			ln.Close()
		}
	}()
	taken := map[string]bool{}
	for p := Lowest; p < Lowest+1000; p++ {
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			held = append(held, ln)
			taken[strconv.Itoa(p)] = true
		}
	}
	for range 50 {
		ports, err := Loopback(5)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if taken[p] {
				t.Fatalf("port %s is held here, and was returned", p)
			}
		}
	}
}
