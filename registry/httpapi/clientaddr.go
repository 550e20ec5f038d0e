package httpapi

import (
	"net"
	"net/http"
	"net/netip"
)

// The client's address, which credential checks queue by (checkqueue.go).
// The registry takes no forwarding headers: it is the address of the
// connection, so that a client cannot choose its own queue.

// remoteAddr is the address of a net/http request's connection, or the
// zero Addr (one queue for all such) when it does not parse.
func remoteAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// tcpAddr is the IP of a TCP connection's address (fasthttp's
// RemoteAddr), or the zero Addr.
func tcpAddr(a net.Addr) netip.Addr {
	t, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}
	}
	ip, _ := netip.AddrFromSlice(t.IP)
	return ip.Unmap()
}
