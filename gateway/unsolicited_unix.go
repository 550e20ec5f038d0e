//go:build unix

package gateway

import (
	"net"
	"syscall"
)

// unsolicited reports whether an idle connection to an instance has
// bytes waiting to be read, or has been closed by the instance: either
// way it must not carry another request. It peeks without waiting, one
// system call.
func unsolicited(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var b [1]byte
	var rerr error
	// Control, not Read: Read would refuse at once on a read deadline
	// that has passed (the idle limit of the last response), and peek
	// nothing.
	err = rc.Control(func(fd uintptr) {
		_, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	if err != nil {
		return true
	}
	if rerr == syscall.EAGAIN || rerr == syscall.EINTR {
		return false // nothing waiting: the connection is as it was left
	}
	return true // bytes waiting (n > 0), closed (n == 0), or broken
}
