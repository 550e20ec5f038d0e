package gateway

import (
	"net"
	"strconv"
	"sync/atomic"
)

// loopConns returns the count of the event loops' connections to the
// instance at key, which the loops move as they open and close them, for
// the traffic's readers (the loops' own counts are theirs alone).
func (g *Gateway) loopConns(key instKey) *atomic.Int64 {
	if v, ok := g.conns.Load(key); ok {
		return v.(*atomic.Int64)
	}
	v, _ := g.conns.LoadOrStore(key, new(atomic.Int64))
	return v.(*atomic.Int64)
}

// connections reports the connections the gateway holds to each instance
// (by its host:port): the fasthttp pools' and the loops'.
func (g *Gateway) connections(yield func(app, addr string, n int)) {
	byKey := map[instKey]int{}
	if m := g.pools.m.Load(); m != nil {
		for k, u := range *m {
			byKey[k] += u.hc.ConnsCount()
		}
	}
	g.conns.Range(func(k, v any) bool {
		byKey[k.(instKey)] += int(v.(*atomic.Int64).Load())
		return true
	})
	for k, n := range byKey {
		if n > 0 {
			yield(k.app, net.JoinHostPort(k.host, strconv.Itoa(k.port)), n)
		}
	}
}
