package gateway

import (
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
// ResponseTimeout says: a read or write that makes no progress for that
// long fails.
type dialer struct {
	net     net.Dialer
	timeout time.Duration // idle limit of each read and write
}

func (d *dialer) dial(addr string) (net.Conn, error) {
	c, err := d.net.Dial("tcp", addr)
	if err != nil {
		return nil, &dialError{err}
	}
	return &idleConn{Conn: c, read: d.timeout, write: d.timeout}, nil
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
	header                headerClock  // a client's: read on fasthttp's goroutine only
	used                  bool         // an instance's: it carried a response and went back to its pool
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
	if end := c.header.deadline(); end != 0 {
		// Within a header: the sooner of the idle limit and the header's.
		if c.read > 0 {
			end = min(end, int64(time.Since(epoch)+c.read))
		}
		c.readArmed.Store(0)
		if err := c.Conn.SetReadDeadline(epoch.Add(time.Duration(end))); err != nil {
			return 0, err
		}
	} else if c.read > 0 {
		if err := rearm(&c.readArmed, c.read, c.Conn.SetReadDeadline); err != nil {
			return 0, err
		}
	}
	n, err := c.Conn.Read(p)
	return c.header.saw(p, n), err
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
	if last := armed.Load(); last != 0 && int64(now)-last <= int64(limit/8) {
		return nil
	}
	armed.Store(int64(now))
	return set(epoch.Add(now + limit))
}

// SetReadDeadline sets a deadline that holds until the next Read moves it
// (at once when reads are bounded).
func (c *idleConn) SetReadDeadline(t time.Time) error {
	c.readArmed.Store(0)
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
	c.readArmed.Store(0)
	c.writeArmed.Store(0)
	return c.Conn.SetDeadline(t)
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
	header      time.Duration // the limit on a request header as a whole
}

func (l idleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &idleConn{Conn: c, read: l.read, write: l.write, header: headerClock{limit: l.header}}, nil
}

// unboundReads lifts the read limit of a client connection that fasthttp
// hijacked for a tunnel, where quiet is normal.
func unboundReads(c net.Conn) {
	if u, ok := c.(interface{ UnsafeConn() net.Conn }); ok {
		c = u.UnsafeConn()
	}
	if ic, ok := c.(*idleConn); ok {
		ic.read = 0
		ic.header.limit = 0
		ic.Conn.SetReadDeadline(time.Time{})
	}
}
