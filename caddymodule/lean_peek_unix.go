//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package caddymodule

import "syscall"

// stillOpen reports whether the idle connection may carry a request:
// the instance has neither closed it nor sent anything unasked (a look
// at its socket that does not wait or take anything). What the look
// needs is made once per connection (leanPeek), as it is done before
// each request on it.
func (c *leanConn) stillOpen() bool {
	if c.peek == nil {
		sc, ok := c.conn.(syscall.Conn)
		if !ok {
			return true
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return false
		}
		p := &leanPeek{rc: rc}
		p.look = func(fd uintptr) {
			_, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			p.open = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		}
		c.peek = p
	}
	p := c.peek
	p.open = false
	// Control, not Read: Read refuses at once once the read deadline the
	// last answer set has passed (a connection idle longer than the read
	// timeout), and would look at nothing (gateway's unsolicited alike).
	return p.rc.Control(p.look) == nil && p.open
}

// leanPeek is what a connection's look at its socket needs.
type leanPeek struct {
	rc   syscall.RawConn
	look func(fd uintptr)
	buf  [1]byte
	open bool
}
