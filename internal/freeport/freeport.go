// Package freeport finds loopback ports for servers that bind them later,
// in another process or a later config: ports below the kernel's
// ephemeral range (Linux's starts at 32768, macOS's and Windows' at
// 49152), from which it picks the local ports of outgoing connections and
// of ":0" listeners. A port from that range, free when looked at, can be
// an outgoing connection's or another ":0" listener's by the time its
// server binds it; one below it can only be another explicit bind's. Each
// caller has a range of its own, so that callers in packages tested side
// by side never pick each other's ports, but for the tests' servers,
// which share one range and hold each port they take (Hold).
package freeport

import (
	"errors"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
)

// Range is the ports, Lowest to Highest, one caller picks from.
type Range struct{ Lowest, Highest int }

// The callers' ranges, apart from each other and below 32768.
var (
	// Benchmarks is cmd/eurekabench's, for the servers it starts.
	Benchmarks = Range{25000, 29999}
	// BenchmarkServers is its servers' own, for the ports they bind
	// themselves: apart from Benchmarks, whose ports picked for the
	// servers started after them are still unbound.
	BenchmarkServers = Range{30000, 31999}
	// CaddyTests is caddymodule's tests', for the ports its configs
	// bind in turn.
	CaddyTests = Range{20000, 23999}
	// Walks is internal/readmecheck's, for the servers a walk starts.
	Walks = Range{24000, 24999}
)

// Loopback returns n distinct ports of r, each free on 127.0.0.1 when
// looked at, picked at random.
func (r Range) Loopback(n int) ([]string, error) {
	var out []string
	for tries := 0; len(out) < n; tries++ {
		if tries == 100*(r.Highest-r.Lowest+1) {
			return nil, errors.New("freeport: no " + strconv.Itoa(n) + " free loopback ports between " + strconv.Itoa(r.Lowest) + " and " + strconv.Itoa(r.Highest))
		}
		port := strconv.Itoa(r.Lowest + rand.IntN(r.Highest-r.Lowest+1))
		if slices.Contains(out, port) {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			continue
		}
		ln.Close()
		out = append(out, port)
	}
	return out, nil
}
