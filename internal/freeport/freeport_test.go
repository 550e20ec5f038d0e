package freeport

import (
	"net"
	"slices"
	"strconv"
	"testing"
)

// testRange is apart from the callers' ranges, so that the tests hold no
// port a package tested beside this one may pick.
var testRange = Range{19990, 19999}

// Every port of a range comes once when all are asked for, each one free
// (a server binds it); one more than the range holds is an error.
func TestLoopbackPortsAreDistinctAndFree(t *testing.T) {
	width := testRange.Highest - testRange.Lowest + 1
	ports, err := testRange.Loopback(width)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ports)
	for k, p := range ports {
		if p != strconv.Itoa(testRange.Lowest+k) {
			t.Fatalf("ports %v, want each of %d to %d once", ports, testRange.Lowest, testRange.Highest)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+p)
		if err != nil {
			t.Fatalf("port %s is not free: %v", p, err)
		}
		ln.Close()
	}
	if ports, err := testRange.Loopback(width + 1); err == nil {
		t.Errorf("%d ports of a range of %d: %v", width+1, width, ports)
	}
}

// A port that is taken is never returned.
func TestLoopbackSkipsPortsInUse(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(testRange.Lowest))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	ports, err := testRange.Loopback(testRange.Highest - testRange.Lowest)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(ports, strconv.Itoa(testRange.Lowest)) {
		t.Errorf("port %d is held here, and was returned: %v", testRange.Lowest, ports)
	}
}

// The callers' ranges are apart from each other, from the tests', and
// below the ephemeral ranges.
func TestRangesApart(t *testing.T) {
	rs := []Range{Benchmarks, BenchmarkServers, CaddyTests, Walks, Tests, testRange}
	for i, a := range rs {
		if a.Lowest > a.Highest || a.Highest >= 32768 {
			t.Errorf("range %v", a)
		}
		for _, b := range rs[i+1:] {
			if a.Lowest <= b.Highest && b.Lowest <= a.Highest {
				t.Errorf("ranges %v and %v overlap", a, b)
			}
		}
	}
}
