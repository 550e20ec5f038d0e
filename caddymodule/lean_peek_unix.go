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
		p.look = func(fd uintptr) bool {
			_, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			p.open = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
			return true
		}
		c.peek = p
	}
	p := c.peek
	p.open = false
	return p.rc.Read(p.look) == nil && p.open
}

// leanPeek is what a connection's look at its socket needs.
type leanPeek struct {
	rc   syscall.RawConn
	look func(fd uintptr) bool
	buf  [1]byte
	open bool
}
