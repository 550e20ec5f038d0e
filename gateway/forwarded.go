package gateway

import (
	"bytes"
	"net"
	"net/netip"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/routing"
)

// setForwarded sets the X-Forwarded-* headers of a request for app (as
// the client wrote it), from a client at remote; req is what
// stripRequest found. Every copy a client sent of a header the gateway
// sets is replaced by the gateway's one (Go's and Caddy's proxies do the
// same); a trusted proxy's X-Forwarded-For values are kept, in order,
// before the client's address, and its first -Proto, -Host and -Prefix
// stand. The headers of hasClientClaims pass from a trusted proxy only.
// route is the RouteHeader value the instance gets ("": none, and a
// client's is removed), region the RegionHeader one, alike. The other
// headers keep their order.
func (g *Gateway) setForwarded(h *fasthttp.RequestHeader, remote net.Addr, tls bool, app []byte, req request, route, region string) {
	has := req.has
	var ipBuf [64]byte
	ip := appendClientIP(ipBuf[:0], remote)
	trusted := has != 0 && g.router.Trusted(remote)

	// The values, read before any header is removed.
	var forBuf, prefixBuf [256]byte
	xff := ip
	if trusted && has&hasXForwardedFor != 0 {
		v := forBuf[:0]
		for _, prior := range h.PeekAll(string(headerXForwardedFor)) {
			if prior = bytes.TrimSpace(prior); len(prior) > 0 {
				v = append(append(v, prior...), ", "...)
			}
		}
		xff = append(v, ip...)
	}
	proto := schemeHTTP
	if tls {
		proto = schemeHTTPS
	}
	host := h.Host()
	if trusted {
		if v := h.PeekBytes(headerXForwardedProto); len(v) > 0 {
			proto = append([]byte(nil), v...)
		}
		if v := h.PeekBytes(headerXForwardedHost); len(v) > 0 {
			host = append([]byte(nil), v...)
		}
	}
	var prior []byte
	if trusted {
		prior = h.PeekBytes(headerXForwardedPrefix)
	}
	prefix := routing.AppendPrefix(prefixBuf[:0], prior, trusted, app)

	const forwarded = hasXForwardedFor | hasXForwardedProto | hasXForwardedHost | hasXForwardedPrefix | hasRoute | hasRegion
	claims := !trusted && has&hasClientClaims != 0
	if req.dup&forwarded == 0 && !claims {
		// At most one copy of each: replaced in place, or added.
		set := func(bit uint, k, v []byte) {
			if has&bit != 0 {
				h.SetCanonical(k, v)
			} else {
				h.AddBytesKV(k, v)
			}
		}
		set(hasXForwardedFor, headerXForwardedFor, xff)
		set(hasXForwardedProto, headerXForwardedProto, proto)
		set(hasXForwardedHost, headerXForwardedHost, host)
		set(hasXForwardedPrefix, headerXForwardedPrefix, prefix)
		switch {
		case route != "":
			set(hasRoute, headerRoute, s2b(route))
		case has&hasRoute != 0:
			h.DelBytes(headerRoute)
		}
		switch {
		case region != "":
			set(hasRegion, headerRegion, s2b(region))
		case has&hasRegion != 0:
			h.DelBytes(headerRegion)
		}
		return
	}
	if has&forwarded != 0 {
		// host may point into the header being rebuilt.
		host = append([]byte(nil), host...)
	}
	removeFields(h, requestSpecial[:], func(k []byte) bool {
		for i, name := range ownHeaders {
			if len(k) == len(name) && bytes.EqualFold(k, name) {
				return 1<<i&forwarded != 0 || (claims && 1<<i&hasClientClaims != 0)
			}
		}
		return false
	})
	h.AddBytesKV(headerXForwardedFor, xff)
	h.AddBytesKV(headerXForwardedProto, proto)
	h.AddBytesKV(headerXForwardedHost, host)
	h.AddBytesKV(headerXForwardedPrefix, prefix)
	if route != "" {
		h.AddBytesKV(headerRoute, s2b(route))
	}
	if region != "" {
		h.AddBytesKV(headerRegion, s2b(region))
	}
}

// appendClientIP appends the IP address of addr.
func appendClientIP(dst []byte, addr net.Addr) []byte {
	if a, ok := addr.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			return ip.Unmap().AppendTo(dst)
		}
	}
	return append(dst, addr.String()...)
}
