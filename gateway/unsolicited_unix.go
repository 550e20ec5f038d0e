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
	n := -1
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // done, whatever it found: never wait
	})
	return err == nil && rerr == nil && n >= 0
}
