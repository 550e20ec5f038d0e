package gateway

import (
	"crypto/tls"
	"net"
	"runtime"
	"sync/atomic"
	"time"
)

// dialError is a failure to connect to an instance: the request never
// reached it, so it can be retried on another whatever its method.
type dialError struct{ err error }

func (e *dialError) Error() string { return "dial: " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// dialer connects to instances. Its connections time out as
// Routing.ReadTimeout says: a read or write that makes no progress for
// that long fails (the response header has its own deadline, set per
// request).
type dialer struct {
	net     net.Dialer
	timeout time.Duration // idle limit of each read and write
	tls     *tls.Config   // for secure ports (Config.TLS)
}

// dial connects to an instance's plain port at addr.
func (d *dialer) dial(addr string) (net.Conn, error) { return d.connect(addr, false, d.timeout) }

// dialTLS connects to an instance's secure port at addr, as dial does.
func (d *dialer) dialTLS(addr string) (net.Conn, error) { return d.connect(addr, true, d.timeout) }

// connect dials addr, over TLS when secure, the handshake within the dial
// timeout as the connection itself (a handshake that fails sent no
// request: a dialError). Each read and write is then bounded by idle, or
// not at all when it is 0 (a tunnel's).
func (d *dialer) connect(addr string, secure bool, idle time.Duration) (net.Conn, error) {
	c, err := d.net.Dial("tcp", addr)
	if err != nil {
		return nil, &dialError{err}
	}
	conn := net.Conn(&idleConn{Conn: c, read: idle, write: idle})
	if !secure {
		return conn, nil
	}
	cfg := d.tls.Clone()
	if cfg == nil {
		cfg = new(tls.Config)
	}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	tc := tls.Client(conn, cfg)
	if d.net.Timeout > 0 {
		tc.SetDeadline(time.Now().Add(d.net.Timeout))
	}
	if err := tc.Handshake(); err != nil {
		tc.Close()
		return nil, &dialError{err}
	}
	tc.SetDeadline(time.Time{})
	return tc, nil
}

// pooled returns the idleConn under a pooled connection, plain or TLS.
func pooled(c net.Conn) *idleConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	ic, _ := c.(*idleConn)
	return ic
}

// idleConn bounds each Read and Write, when its limit is set, to that long
// from the time it starts: an idle timeout, as nginx's proxy_read_timeout
// and send_timeout, rather than a deadline for a whole body. It moves a
// deadline only when an eighth of the limit has passed since it last did,
// so a busy connection sets one rarely; a read or write may so be cut off
// after 7/8 of its limit. Reads, writes and deadline changes may come from
// different goroutines (a tunnel's two directions).
type idleConn struct {
	net.Conn
	read, write           time.Duration
	readArmed, writeArmed atomic.Int64 // when the deadline was last moved, since epoch; 0 for never
	// until is a deadline someone set (fasthttp, for a request header)
	// that each read keeps when it is sooner than the idle limit, since
	// epoch; 0 for none. Reads and the deadline's setting both happen on
	// the connection's serving goroutine.
	until int64
	// fresh is a client connection that has sent nothing yet: fasthttp
	// sets the header's deadline when it opens, not at its first byte
	// as on later requests, so the deadline waits (pending, its length)
	// for that byte, and the idle limit bounds the wait for it.
	fresh   bool
	pending time.Duration
	used    bool // an instance's: it carried a response and went back to its pool
}

func (c *idleConn) Read(p []byte) (int, error) {
	// Most reads here wait for an answer just asked for (the instance's
	// response after the request went out, the client's next request after
	// its response did). Letting the other goroutines run first gives it
	// time to arrive: a read that finds nothing costs a system call that
	// returns EAGAIN and a trip through the poller, which is what a
	// gateway loaded on few cores spends most of its extra CPU on next to
	// nginx (which reads only what epoll says is there). When nothing else
	// is runnable, Gosched returns at once.
	runtime.Gosched()
	if c.read > 0 {
		if c.until != 0 && c.until < int64(time.Since(epoch)+c.read) {
			// A deadline set from outside comes first (fasthttp's for the
			// request header: ServerConfig.HeaderTimeout).
			if c.readArmed.Load() != -1 {
				c.readArmed.Store(-1)
				if err := c.Conn.SetReadDeadline(epoch.Add(time.Duration(c.until))); err != nil {
					return 0, err
				}
			}
		} else if err := rearm(&c.readArmed, c.read, c.Conn.SetReadDeadline); err != nil {
			return 0, err
		}
	}
	n, err := c.Conn.Read(p)
	if n > 0 && c.fresh {
		c.fresh = false
		if c.pending > 0 {
			c.until = int64(time.Since(epoch) + c.pending)
			c.readArmed.Store(0)
			c.pending = 0
		}
	}
	return n, err
}

func (c *idleConn) Write(p []byte) (int, error) {
	if c.write > 0 {
		if err := rearm(&c.writeArmed, c.write, c.Conn.SetWriteDeadline); err != nil {
			return 0, err
		}
	}
	return c.Conn.Write(p)
}

// epoch is the origin of the monotonic times idleConn keeps: reading the
// monotonic clock alone costs half of time.Now.
var epoch = time.Now()

// rearm moves a deadline to limit from now when an eighth of the limit
// has passed since armed.
func rearm(armed *atomic.Int64, limit time.Duration, set func(time.Time) error) error {
	now := time.Since(epoch)
	if last := armed.Load(); last > 0 && int64(now)-last <= int64(limit/8) {
		return nil
	}
	armed.Store(int64(now))
	return set(epoch.Add(now + limit))
}

// SetReadDeadline sets a deadline for the reads to come. When reads are
// bounded, each keeps it while it is sooner than the idle limit: fasthttp
// sets one when a request's first byte arrives (ServerConfig.HeaderTimeout,
// as its ReadTimeout) and a far one once the header is read
// (HeaderReceived), so that the header as a whole is bounded and the body
// only by the idle limit.
func (c *idleConn) SetReadDeadline(t time.Time) error {
	c.readArmed.Store(0)
	c.until = 0
	if c.fresh && c.read > 0 && !t.IsZero() {
		c.pending = time.Until(t) // from the first byte; see fresh
		return nil
	}
	if !t.IsZero() {
		c.until = max(1, int64(t.Sub(epoch)))
	}
	return c.Conn.SetReadDeadline(t)
}

// SetWriteDeadline sets a deadline that holds until the next Write moves
// it (at once when writes are bounded).
func (c *idleConn) SetWriteDeadline(t time.Time) error {
	c.writeArmed.Store(0)
	return c.Conn.SetWriteDeadline(t)
}

// SetDeadline sets both deadlines.
func (c *idleConn) SetDeadline(t time.Time) error {
	c.writeArmed.Store(0)
	c.Conn.SetWriteDeadline(t)
	return c.SetReadDeadline(t)
}

// CloseWrite half-closes the connection, when the underlying one can.
func (c *idleConn) CloseWrite() error { return closeWrite(c.Conn) }

// closeWrite half-closes c (a tunnel's direction that ended) when it
// can, through the wrappers of this package.
func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// idleListener bounds each Read and Write on its connections: a client
// that sends nothing, or takes no data, for that long is cut off.
type idleListener struct {
	net.Listener
	read, write time.Duration
}

func (l idleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &idleConn{Conn: c, read: l.read, write: l.write, fresh: true}, nil
}

// unhijacked returns the connection fasthttp wraps in the one it gives a
// hijack handler (which reads what fasthttp buffered first).
func unhijacked(c net.Conn) net.Conn {
	if u, ok := c.(interface{ UnsafeConn() net.Conn }); ok {
		return u.UnsafeConn()
	}
	return c
}

// unboundReads lifts the read limit of a client connection that fasthttp
// hijacked (a tunnel, where quiet is normal; a lingering close, which
// sets its own).
func unboundReads(c net.Conn) {
	if ic, ok := unhijacked(c).(*idleConn); ok {
		ic.read = 0
		ic.fresh, ic.pending = false, 0
		ic.SetReadDeadline(time.Time{})
	}
}
