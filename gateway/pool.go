package gateway

import (
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/tick"
	"github.com/eurekagate/eurekagate/notify"
)

// instKey identifies an instance's address: its registered host and its
// plain port, or its secure one. Instances of one app at the same address
// share a pool.
type instKey struct {
	app    string // upper case
	host   string
	port   int
	secure bool
}

func keyOf(app string, inst *eureka.InstanceInfo, secure bool) instKey {
	host := inst.HostName
	if host == "" {
		host = inst.IPAddr
	}
	port := inst.Port.Number
	if secure {
		port = inst.SecurePort.Number
	}
	return instKey{app: app, host: host, port: port, secure: secure}
}

// upstream is the connection pool to one instance. The gateway uses its
// HostClient for the pool only: requests go through roundTrip.
type upstream struct {
	key    instKey
	addr   string // host:port
	hc     *fasthttp.HostClient
	active atomic.Int64 // requests in roundTrip
}

// pools holds the upstreams: a copy-on-write map, read without a lock on
// every request and rewritten when an instance is first used or leaves.
type pools struct {
	m  atomic.Pointer[map[instKey]*upstream]
	mu sync.Mutex
	// retired are the upstreams of departed instances whose connections
	// may still carry a response: they are closed again at each sweep
	// until no request uses them.
	retired  []*upstream
	closed   bool
	sweeping bool // the sweeper runs
}

// upstream returns the pool for inst at its plain port, or its secure
// one, making it if needed.
func (g *Gateway) upstream(app string, inst *eureka.InstanceInfo, secure bool) *upstream {
	k := keyOf(app, inst, secure)
	if m := g.pools.m.Load(); m != nil {
		if u := (*m)[k]; u != nil {
			return u
		}
	}
	p := &g.pools
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.m.Load()
	if old != nil && (*old)[k] != nil {
		return (*old)[k]
	}
	u := &upstream{key: k, addr: balancer.Address(inst, secure)}
	u.hc = &fasthttp.HostClient{
		Addr:                          u.addr,
		Dial:                          g.dialer.dial, // or dialTLS, below
		MaxConns:                      g.cfg.MaxConnsPerInstance,
		MaxConnWaitTimeout:            g.cfg.Routing.DialTimeout,
		MaxIdleConnDuration:           g.cfg.IdleConnTimeout,
		ReadBufferSize:                bufferSize,
		WriteBufferSize:               bufferSize,
		NoDefaultUserAgentHeader:      true,
		DisablePathNormalizing:        true,
		DisableHeaderNamesNormalizing: false,
		// The most recently used connection first: the others go idle
		// and are closed, and the pool stays as small as the load.
		ConnPoolStrategy: fasthttp.LIFO,
	}
	if secure {
		// The handshake is the dial's, bounded by DialTimeout; fasthttp
		// sees a connection like any other (IsTLS stays false).
		u.hc.Dial = g.dialer.dialTLS
	}
	if p.closed {
		return u // the gateway is closing: serve, pool nothing
	}
	next := make(map[instKey]*upstream, 1)
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[k] = u
	p.m.Store(&next)
	g.startSweeperLocked()
	return u
}

// startSweeper starts the sweeper, once: with the first pool, or with the
// first request the traffic counters count. The sweeper runs sweep every
// SweepInterval and after each change the registry announces when it is
// a notify.Notifier (how it learns that an instance left), until the
// gateway closes.
func (g *Gateway) startSweeper() {
	if g.sweeperOn.Load() {
		return
	}
	g.pools.mu.Lock()
	defer g.pools.mu.Unlock()
	g.startSweeperLocked()
}

// startSweeperLocked is startSweeper with the pools' lock held. Close
// stops the sweeper; once the gateway is closing, none starts.
func (g *Gateway) startSweeperLocked() {
	p := &g.pools
	if p.sweeping || p.closed {
		return
	}
	p.sweeping = true
	g.sweeperOn.Store(true)
	// The channel taken before the goroutine runs: a change between the
	// first pool and a late start of the goroutine would wait for the
	// ticker.
	n, changed := notify.Of(g.cfg.Routing.Instances)
	go func() {
		defer close(g.swept)
		tick.OnChange(g.cfg.SweepInterval, g.stop, n, changed, g.sweep)
	}()
}

// sweep retires the pools of departed instances and drops the traffic
// counters of what has been gone from the registry for traffic.Grace.
func (g *Gateway) sweep() {
	g.sweepPools()
	g.sweepTraffic()
}

// sweepTraffic drops the counters (and so the series) of the apps and
// instances gone from the registry for traffic.Grace, and what the
// balancer, its Checker and the router keep of the apps it dropped.
func (g *Gateway) sweepTraffic() {
	if g.traffic == nil {
		return
	}
	dropped := g.traffic.Sweep(g.cfg.Now(), g.cfg.Routing.Instances)
	g.bal.ForgetApps(dropped)
	g.router.ForgetApps(dropped)
}

// sweepPools retires the pools of instances that are no longer UP in the
// registry, and closes the connections of retired pools that are idle.
func (g *Gateway) sweepPools() {
	p := &g.pools
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.m.Load()
	var gone []instKey
	if old != nil {
		for k := range *old {
			if !g.listed(k) {
				gone = append(gone, k)
			}
		}
	}
	if len(gone) > 0 {
		next := make(map[instKey]*upstream, len(*old)-len(gone))
		for k, v := range *old {
			next[k] = v
		}
		for _, k := range gone {
			p.retired = append(p.retired, next[k])
			delete(next, k)
		}
		p.m.Store(&next)
	}
	kept := p.retired[:0]
	for _, u := range p.retired {
		busy := u.active.Load() > 0
		u.hc.CloseIdleConnections()
		if busy || u.hc.ConnsCount() > 0 {
			kept = append(kept, u)
		}
	}
	clear(p.retired[len(kept):])
	p.retired = kept
}

// listed reports whether k is the address of an UP instance of its app.
func (g *Gateway) listed(k instKey) bool {
	for _, inst := range g.cfg.Routing.Instances.Instances(k.app) {
		if keyOf(k.app, inst, k.secure) == k {
			return true
		}
	}
	return false
}

// closePools closes every pooled connection and pools nothing more.
func (g *Gateway) closePools() {
	p := &g.pools
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if m := p.m.Load(); m != nil {
		for _, u := range *m {
			u.hc.CloseIdleConnections()
		}
	}
	for _, u := range p.retired {
		u.hc.CloseIdleConnections()
	}
	p.retired = nil
	p.m.Store(nil)
}
