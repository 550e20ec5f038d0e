package caddymodule

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/eurekagate/eurekagate/internal/tick"
)

// leanPool keeps the lean client's idle connections, per instance
// address: at most maxIdle each, the last one back taken first, none
// used after idleTimeout idle (closed when taken, and by the pool's
// sweeper, which runs every sweepEvery until close).
type leanPool struct {
	dialConn    func(ctx context.Context, network, addr string) (net.Conn, error) // the transports' dialer
	readTimeout time.Duration
	idleTimeout time.Duration
	maxIdle     int
	now         func() time.Time

	mu     sync.Mutex
	idle   map[string]*leanIdle
	closed bool

	stop      chan struct{}
	swept     sync.WaitGroup
	closeOnce sync.Once
}

// leanIdle are one address's idle connections, the oldest first.
type leanIdle struct{ conns []*leanConn }

// newLeanPool makes a pool and starts its sweeper, which close stops.
func newLeanPool(dialTimeout, readTimeout, idleTimeout, sweepEvery time.Duration, maxIdle int, now func() time.Time) *leanPool {
	p := &leanPool{
		dialConn:    dialer(dialTimeout, 0), // the lean connection times its reads itself
		readTimeout: readTimeout,
		idleTimeout: idleTimeout,
		maxIdle:     maxIdle,
		now:         now,
		idle:        map[string]*leanIdle{},
		stop:        make(chan struct{}),
	}
	p.swept.Add(1)
	go func() {
		defer p.swept.Done()
		tick.Every(sweepEvery, p.stop, nil, p.sweep)
	}()
	return p
}

// get returns an idle connection to addr that may still be used, or a
// new one (a failure to make it is a dialError). Each idle connection is
// looked at before it is used again (a system call), however short its
// idleness: one whose instance closed it (an idle timeout of its own:
// Tomcat's 20 s, Node's 5 s), so that a POST does not go out on it and
// fail, or sent something unasked (a second answer to the request
// before), which would be read as the next request's answer, is closed
// instead.
func (p *leanPool) get(ctx context.Context, addr string) (*leanConn, error) {
	for c := p.take(addr); c != nil; c = p.take(addr) {
		idle := p.now().Sub(c.idleSince)
		if idle >= p.idleTimeout || !c.stillOpen() {
			c.close()
			continue
		}
		c.reused = true
		return c, nil
	}
	return p.dial(ctx, addr)
}

// take removes the connection to addr that came back last, if any.
func (p *leanPool) take(addr string) *leanConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	in := p.idle[addr]
	if in == nil || len(in.conns) == 0 {
		return nil
	}
	c := in.conns[len(in.conns)-1]
	in.conns[len(in.conns)-1] = nil
	in.conns = in.conns[:len(in.conns)-1]
	return c
}

// dial makes a new connection to addr.
func (p *leanPool) dial(ctx context.Context, addr string) (*leanConn, error) {
	c, err := p.dialConn(ctx, "tcp", addr)
	if err != nil {
		return nil, err // a dialError
	}
	return newLeanConn(c, addr, p.readTimeout), nil
}

// put gives back a connection whose attempt ended cleanly, or closes it
// when the pool is full for its address, closed, or the instance sent
// more than its answer.
func (p *leanPool) put(c *leanConn) {
	if c.br.Buffered() > 0 {
		c.close()
		return
	}
	c.idleSince = p.now()
	p.mu.Lock()
	in := p.idle[c.addr]
	if in == nil && !p.closed {
		in = &leanIdle{}
		p.idle[c.addr] = in
	}
	if p.closed || len(in.conns) >= p.maxIdle {
		p.mu.Unlock()
		c.close()
		return
	}
	in.conns = append(in.conns, c)
	p.mu.Unlock()
}

// sweep closes the connections idle for idleTimeout, and forgets the
// addresses left without any (an instance gone).
func (p *leanPool) sweep() {
	now := p.now()
	var stale []*leanConn
	p.mu.Lock()
	for addr, in := range p.idle {
		kept := in.conns[:0]
		for _, c := range in.conns {
			if now.Sub(c.idleSince) >= p.idleTimeout {
				stale = append(stale, c)
			} else {
				kept = append(kept, c)
			}
		}
		clear(in.conns[len(kept):])
		in.conns = kept
		if len(kept) == 0 {
			delete(p.idle, addr)
		}
	}
	p.mu.Unlock()
	for _, c := range stale {
		c.close()
	}
}

// idleCount is how many idle connections the pool holds.
func (p *leanPool) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, in := range p.idle {
		n += len(in.conns)
	}
	return n
}

// close stops the sweeper and waits for it, and closes the idle
// connections; a connection given back after is closed.
func (p *leanPool) close() {
	p.closeOnce.Do(func() {
		close(p.stop)
		p.swept.Wait()
		p.mu.Lock()
		p.closed = true
		idle := p.idle
		p.idle = nil
		p.mu.Unlock()
		for _, in := range idle {
			for _, c := range in.conns {
				c.close()
			}
		}
	})
}
