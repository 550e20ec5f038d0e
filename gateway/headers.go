package gateway

import (
	"bufio"
	"bytes"
	"net"
	"net/netip"

	"github.com/valyala/fasthttp"
)

// The hop-by-hop headers (RFC 9110 section 7.6.1, and those Go's
// httputil.ReverseProxy removes), as fasthttp normalizes their names.
// Transfer-Encoding and Trailer are fasthttp's to write: it decodes a
// received body and frames the forwarded one anew.
var hopHeaders = [...][]byte{
	[]byte("Connection"),
	[]byte("Proxy-Connection"),
	[]byte("Keep-Alive"),
	[]byte("Proxy-Authenticate"),
	[]byte("Proxy-Authorization"),
	[]byte("Te"),
	[]byte("Upgrade"),
	// fasthttp answered the client's Expect: 100-continue itself.
	[]byte("Expect"),
}

const (
	hopConnection = 1 << iota
	hopProxyConnection
	hopKeepAlive
	hopProxyAuthenticate
	hopProxyAuthorization
	hopTE
	hopUpgrade
	hopExpect
)

var (
	headerXForwardedFor    = []byte("X-Forwarded-For")
	headerXForwardedProto  = []byte("X-Forwarded-Proto")
	headerXForwardedHost   = []byte("X-Forwarded-Host")
	headerXForwardedPrefix = []byte("X-Forwarded-Prefix")
	tokenUpgrade           = []byte("upgrade")
	tokenClose             = []byte("close")
	tokenKeepAlive         = []byte("keep-alive")
	schemeHTTP             = []byte("http")
	schemeHTTPS            = []byte("https")
)

// hopSet records which hop-by-hop headers a message has, and the names
// its Connection header lists, so they can be removed after the scan; and
// which of the headers the gateway sets are there already.
type hopSet struct {
	found   uint
	named   [8][]byte // names listed in Connection (copies)
	nNamed  int
	upgrade bool // Connection lists "upgrade" and Upgrade is present
	has     uint // of ownHeaders
}

// The headers the gateway sets, by bit in hopSet.has.
var ownHeaders = [...][]byte{headerXForwardedFor, headerXForwardedProto, headerXForwardedHost, headerXForwardedPrefix, []byte("Date")}

const (
	hasXForwardedFor = 1 << iota
	hasXForwardedProto
	hasXForwardedHost
	hasXForwardedPrefix
	hasDate
)

// scan looks at one header.
func (s *hopSet) scan(k, v []byte) {
	if len(k) < 2 {
		return
	}
	if k[0]|0x20 == 'x' || k[0]|0x20 == 'd' {
		for i, h := range ownHeaders {
			if len(k) == len(h) && bytes.EqualFold(k, h) {
				s.has |= 1 << i
				return
			}
		}
	}
	for i, h := range hopHeaders {
		if len(k) == len(h) && bytes.EqualFold(k, h) {
			s.found |= 1 << i
			if i == 0 {
				s.connectionTokens(v)
			}
			return
		}
	}
}

// connectionTokens records the header names a Connection value lists.
func (s *hopSet) connectionTokens(v []byte) {
	for len(v) > 0 {
		var tok []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			tok, v = v[:i], v[i+1:]
		} else {
			tok, v = v, nil
		}
		tok = bytes.TrimSpace(tok)
		switch {
		case len(tok) == 0, bytes.EqualFold(tok, tokenClose), bytes.EqualFold(tok, tokenKeepAlive):
		case bytes.EqualFold(tok, tokenUpgrade):
			s.upgrade = true
		case s.nNamed < len(s.named):
			s.named[s.nNamed] = append(s.named[s.nNamed][:0], tok...)
			s.nNamed++
		}
	}
}

// stripRequest removes the hop-by-hop headers of a request. It reports
// whether the request asks for an upgrade, and if so keeps its Upgrade
// header (the tunnel sends it on with Connection: Upgrade); and which
// X-Forwarded-* headers it has (hasXForwardedFor and so on).
func stripRequest(h *fasthttp.RequestHeader) (upgrade bool, has uint) {
	var s hopSet
	for k, v := range h.All() {
		s.scan(k, v)
	}
	s.upgrade = s.upgrade && s.found&hopUpgrade != 0
	if s.found == 0 && !h.ConnectionClose() {
		return false, s.has
	}
	for i, name := range hopHeaders {
		if s.found&(1<<i) != 0 && !(s.upgrade && 1<<i == hopUpgrade) {
			h.DelBytes(name)
		}
	}
	for _, name := range s.named[:s.nNamed] {
		h.DelBytes(name)
	}
	// The client's Connection: close is for its own connection, which
	// fasthttp noted before the handler ran; the instance's is kept alive.
	h.ResetConnectionClose()
	return s.upgrade, s.has
}

// stripResponse removes the hop-by-hop headers of an instance's response,
// and gives it a Date if it has none (RFC 9110 section 6.6.1). keepUpgrade
// keeps Upgrade, for a 101 answer.
func stripResponse(h *fasthttp.ResponseHeader, keepUpgrade bool) {
	var s hopSet
	for k, v := range h.All() {
		s.scan(k, v)
	}
	if s.found != 0 {
		for i, name := range hopHeaders {
			if s.found&(1<<i) != 0 && !(keepUpgrade && 1<<i == hopUpgrade) {
				h.DelBytes(name)
			}
		}
		for _, name := range s.named[:s.nNamed] {
			h.DelBytes(name)
		}
	}
	// The instance's Connection: close is about its connection; whether
	// the client's stays open is the gateway's business.
	h.ResetConnectionClose()
	if s.has&hasDate == 0 && !keepUpgrade {
		addDate(h)
	}
}

// addDate has fasthttp write its Date into a response header that has
// none. The Server leaves the instances' Date in place
// (NoDefaultDate), and fasthttp offers no other way to turn its own back
// on than a header reset, so the header is read anew after one. This is
// for the rare instance that sends no Date.
func addDate(h *fasthttp.ResponseHeader) {
	raw := append([]byte(nil), h.Header()...)
	h.Reset() // noDefaultDate = false
	h.SetNoDefaultContentType(true)
	h.Read(bufio.NewReader(bytes.NewReader(raw)))
}

// setForwarded sets the X-Forwarded-* headers of a request for app (as
// the client wrote it), from a client at remote. has says which of them
// the request has already.
func (g *Gateway) setForwarded(h *fasthttp.RequestHeader, remote net.Addr, tls bool, app []byte, has uint) {
	// set replaces a header the request has, and adds one it has not,
	// which spares a search.
	set := func(bit uint, k, v []byte) {
		if has&bit != 0 {
			h.SetCanonical(k, v)
		} else {
			h.AddBytesKV(k, v)
		}
	}
	var ipBuf [64]byte
	ip := appendClientIP(ipBuf[:0], remote)
	trusted := has != 0 && g.trusted(remote)
	if prior := h.PeekBytes(headerXForwardedFor); trusted && len(prior) > 0 {
		var buf [256]byte
		v := append(append(append(buf[:0], prior...), ", "...), ip...)
		set(hasXForwardedFor, headerXForwardedFor, v)
	} else {
		set(hasXForwardedFor, headerXForwardedFor, ip)
	}
	if !trusted || len(h.PeekBytes(headerXForwardedProto)) == 0 {
		if tls {
			set(hasXForwardedProto, headerXForwardedProto, schemeHTTPS)
		} else {
			set(hasXForwardedProto, headerXForwardedProto, schemeHTTP)
		}
	}
	if !trusted || len(h.PeekBytes(headerXForwardedHost)) == 0 {
		set(hasXForwardedHost, headerXForwardedHost, h.Host())
	}
	var buf [256]byte
	prefix := buf[:0]
	if trusted {
		prefix = append(prefix, bytes.TrimRight(h.PeekBytes(headerXForwardedPrefix), "/")...)
	}
	prefix = append(append(prefix, '/'), app...)
	set(hasXForwardedPrefix, headerXForwardedPrefix, prefix)
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

// trusted reports whether the client at addr is one of TrustedProxies.
func (g *Gateway) trusted(addr net.Addr) bool {
	if len(g.cfg.TrustedProxies) == 0 {
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
	for _, p := range g.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
