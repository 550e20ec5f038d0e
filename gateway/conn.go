package gateway

import (
	"net"
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
// after 7/8 of its limit.
type idleConn struct {
	net.Conn
	read, write           time.Duration
	readArmed, writeArmed time.Time // when the deadline was last moved
}

func (c *idleConn) Read(p []byte) (int, error) {
	if c.read > 0 {
		if now := time.Now(); now.Sub(c.readArmed) > c.read/8 {
			c.readArmed = now
			if err := c.Conn.SetReadDeadline(now.Add(c.read)); err != nil {
				return 0, err
			}
		}
	}
	return c.Conn.Read(p)
}

func (c *idleConn) Write(p []byte) (int, error) {
	if c.write > 0 {
		if now := time.Now(); now.Sub(c.writeArmed) > c.write/8 {
			c.writeArmed = now
			if err := c.Conn.SetWriteDeadline(now.Add(c.write)); err != nil {
				return 0, err
			}
		}
	}
	return c.Conn.Write(p)
}

// SetReadDeadline sets a deadline that holds until the next Read moves it
// (at once when reads are bounded).
func (c *idleConn) SetReadDeadline(t time.Time) error {
	c.readArmed = time.Time{}
	return c.Conn.SetReadDeadline(t)
}

// SetWriteDeadline sets a deadline that holds until the next Write moves
// it (at once when writes are bounded).
func (c *idleConn) SetWriteDeadline(t time.Time) error {
	c.writeArmed = time.Time{}
	return c.Conn.SetWriteDeadline(t)
}

// SetDeadline sets both deadlines.
func (c *idleConn) SetDeadline(t time.Time) error {
	c.readArmed, c.writeArmed = time.Time{}, time.Time{}
	return c.Conn.SetDeadline(t)
}

// CloseWrite half-closes the connection, when the underlying one can.
func (c *idleConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// writeIdleListener bounds each Write on its connections: a client that
// takes no data for that long is cut off, however long its response.
// Reads keep the deadlines fasthttp sets.
type writeIdleListener struct {
	net.Listener
	timeout time.Duration
}

func (l writeIdleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &idleConn{Conn: c, write: l.timeout}, nil
}
