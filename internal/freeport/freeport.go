// Package freeport finds loopback ports for servers that bind them later,
// in another process or a later config: ports below the kernel's
// ephemeral range (Linux's starts at 32768, the BSDs' and Windows' at
// 49152), from which it picks the local ports of outgoing connections and
// of ":0" listeners. A port from that range, free when looked at, can be
// some connection's by the time its server binds it; one below it can
// only be another explicit bind's.
package freeport

import (
	"errors"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
)

// Lowest and Highest bound the ports Loopback returns.
const (
	Lowest  = 20000
	Highest = 31999
)

// Loopback returns n distinct ports, each free on 127.0.0.1 when looked
// at, at random between Lowest and Highest.
func Loopback(n int) ([]string, error) {
	var out []string
	for tries := 0; len(out) < n; tries++ {
		if tries == 1000*n {
			return nil, errors.New("freeport: no " + strconv.Itoa(n) + " free loopback ports between " + strconv.Itoa(Lowest) + " and " + strconv.Itoa(Highest))
		}
		port := strconv.Itoa(Lowest + rand.IntN(Highest-Lowest+1))
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
