package routing

import (
	"math/rand/v2"
	"net"
	"net/netip"
)

// RequestIDHeader is the header that carries a request's id to the
// instance, and that the gateways add when the client sent none.
const RequestIDHeader = "X-Request-Id"

// AppendRequestID appends a new request id: 32 random hex digits.
func AppendRequestID(dst []byte) []byte {
	const hex = "0123456789abcdef"
	for range 2 {
		v := rand.Uint64()
		for range 16 {
			dst = append(dst, hex[v&15])
			v >>= 4
		}
	}
	return dst
}

// Trusted reports whether the client at addr is one of the TrustedProxies,
// whose forwarding headers are kept and added to.
func (r *Router) Trusted(addr net.Addr) bool {
	if len(r.cfg.TrustedProxies) == 0 {
		return false
	}
	a, ok := addr.(*net.TCPAddr)
	if !ok {
		return false
	}
	ip, ok := netip.AddrFromSlice(a.IP)
	if !ok {
		return false
	}
	ip = ip.Unmap()
	for _, p := range r.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// AppendPrefix appends the X-Forwarded-Prefix of a request for the
// application the client spelled name: "/<name>", as Spring's StripPrefix
// sets it, so that the application can build its own links; after the
// prefix a trusted proxy in front sent (prior, its trailing slashes
// dropped). An untrusted client's prior is replaced.
func AppendPrefix[P, N text](dst []byte, prior P, trusted bool, name N) []byte {
	if trusted {
		n := len(prior)
		for n > 0 && prior[n-1] == '/' {
			n--
		}
		dst = append(dst, prior[:n]...)
	}
	return append(append(dst, '/'), name...)
}
