//go:build !unix

package gateway

import "net"

// unsolicited cannot peek here: a pooled connection is reused as it is
// (the bytes left in its buffer are still checked).
func unsolicited(net.Conn) bool { return false }
