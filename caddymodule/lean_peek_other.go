//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package caddymodule

// stillOpen reports whether the idle connection may carry a request:
// without a look at the socket here, it may, and a connection the
// instance closed is left to the retry on a new connection.
func (c *leanConn) stillOpen() bool { return true }

// leanPeek is nothing here: there is no look.
type leanPeek struct{}
