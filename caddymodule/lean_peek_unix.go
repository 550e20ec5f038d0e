//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package caddymodule

import "syscall"

// stillOpen reports whether the idle connection may carry a request:
// the instance has neither closed it nor sent anything unasked (a look
// at its socket that does not wait or take anything).
func (c *leanConn) stillOpen() bool {
	sc, ok := c.conn.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && open
}
