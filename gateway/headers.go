package gateway

import (
	"bufio"
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/routing"
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
// which of the headers the gateway sets or drops are there already.
type hopSet struct {
	found      uint
	named      [8][]byte // names listed in Connection (copies)
	nNamed     int
	upgrade    bool // Connection lists "upgrade" and Upgrade is present
	has        uint // of ownHeaders
	dup        uint // of ownHeaders, those that came more than once
	underscore bool // a field name has an underscore
}

// The headers the gateway sets or passes from trusted proxies only
// (routing.GatewayHeaders, the list the traffic rules refuse to read), by
// bit in hopSet.has, then Date, which the gateway adds to a response that
// has none.
var ownHeaders = func() (own [len(routing.GatewayHeaders) + 1][]byte) {
	for i, name := range routing.GatewayHeaders {
		own[i] = []byte(name)
	}
	own[len(own)-1] = []byte("Date")
	return own
}()

var (
	headerRoute  = []byte(balancer.RouteHeader)
	headerRegion = []byte(routing.RegionHeader)
)

const (
	hasXForwardedFor = 1 << iota
	hasXForwardedProto
	hasXForwardedHost
	hasXForwardedPrefix
	hasForwarded
	hasXRealIP
	hasXForwardedPort
	hasXForwardedSsl
	hasTrueClientIP
	hasRoute
	hasRegion
	hasRequestID
	hasDate

	// hasClientClaims are the headers only a trusted proxy's pass.
	hasClientClaims = hasForwarded | hasXRealIP | hasXForwardedPort | hasXForwardedSsl | hasTrueClientIP
)

// reset makes s ready for the next message, keeping the room of its
// named copies.
func (s *hopSet) reset() { *s = hopSet{named: s.named} }

// scanName is one of the names scan looks for: of ownHeaders (own) or
// of hopHeaders, at index i.
type scanName struct {
	name []byte
	own  bool
	i    int
}

// scanNames are ownHeaders and hopHeaders by length: a field name is
// compared with the one to three of its length, where scan compared it
// with each of the 21 in turn (on every field of every request and
// response).
var scanNames = func() (t [20][]scanName) {
	for i, h := range ownHeaders {
		t[len(h)] = append(t[len(h)], scanName{h, true, i})
	}
	for i, h := range hopHeaders {
		t[len(h)] = append(t[len(h)], scanName{h, false, i})
	}
	return t
}()

// scan looks at one header.
func (s *hopSet) scan(k, v []byte) {
	if len(k) < 2 {
		return
	}
	var hop *scanName
	if len(k) < len(scanNames) {
		for j := range scanNames[len(k)] {
			n := &scanNames[len(k)][j]
			if !bytes.EqualFold(k, n.name) {
				continue
			}
			if n.own {
				s.dup |= s.has & (1 << n.i)
				s.has |= 1 << n.i
				return
			}
			hop = n
			break
		}
	}
	if hop == nil {
		// None of the names has an underscore.
		if bytes.IndexByte(k, '_') >= 0 {
			s.underscore = true
		}
		return
	}
	s.found |= 1 << hop.i
	if hop.i == 0 {
		s.connectionTokens(v)
	}
}

// framingHeaders are the headers a Connection header may not remove: the
// gateway frames and routes the message by them (RFC 9110 section 7.6.1
// forbids a sender to list them; nginx ignores such a listing).
var framingHeaders = [...][]byte{[]byte("Content-Length"), []byte("Transfer-Encoding"), []byte("Host")}

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
		case len(tok) == 0, bytes.EqualFold(tok, tokenClose), bytes.EqualFold(tok, tokenKeepAlive), isFraming(tok):
		case bytes.EqualFold(tok, tokenUpgrade):
			s.upgrade = true
		case s.nNamed < len(s.named):
			s.named[s.nNamed] = append(s.named[s.nNamed][:0], tok...)
			s.nNamed++
		}
	}
}

func isFraming(name []byte) bool {
	for _, h := range framingHeaders {
		if bytes.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// request is what stripRequest found in a request's header.
type request struct {
	upgrade    bool // it asks for an upgrade
	expect     bool // it had an Expect header
	has        uint // which of ownHeaders it has (hasXForwardedFor and so on)
	dup        uint // which of ownHeaders it has more than once
	underscore bool // a name with an underscore was there
}

// stripRequest removes the hop-by-hop headers of a request, the headers
// whose names have an underscore, and the Trailer announcement, keeping
// the order of the others. It reports whether the request asks for an
// upgrade, and if so keeps its Upgrade header (the tunnel sends it on
// with Connection: Upgrade); and which of ownHeaders it has. s is the
// scan's state, the caller's to keep: the scan runs in a closure of the
// header's iterator, so a hopSet of stripRequest's own would be allocated
// for every request, where a loop keeps one for all of its.
func stripRequest(h *fasthttp.RequestHeader, s *hopSet) request {
	s.reset()
	for k, v := range h.All() {
		s.scan(k, v)
	}
	s.upgrade = s.upgrade && s.found&hopUpgrade != 0
	r := request{upgrade: s.upgrade, expect: s.found&hopExpect != 0, has: s.has, dup: s.dup, underscore: s.underscore}
	if len(h.PeekTrailerKeys()) > 0 {
		// No trailer reaches the instance (dropTrailers), so none is
		// announced to it.
		h.DelBytes(headerTrailer)
	}
	if s.found != 0 || s.nNamed > 0 || s.underscore {
		removeFields(h, requestSpecial[:], func(k []byte) bool { return s.hopByHop(k) || routing.HasUnderscore(k) })
		s.dropNamedSpecial(h, requestSpecial[:])
	}
	if s.found&hopConnection != 0 || h.ConnectionClose() {
		// The client's Connection: close is for its own connection, which
		// fasthttp noted before the handler ran; the instance's is kept
		// alive.
		h.ResetConnectionClose()
	}
	return r
}

// dropNamedSpecial removes the headers the Connection header names that
// fasthttp keeps apart (removeFields leaves them), but those the gateway
// frames and routes by.
func (s *hopSet) dropNamedSpecial(h headerFields, special [][]byte) {
	for _, name := range s.named[:s.nNamed] {
		if isAny(name, special) && !isFraming(name) {
			h.DelBytes(name)
		}
	}
}

// hopByHop reports whether the scanned message's field k is one to
// remove: a hop-by-hop header or one its Connection names (but Upgrade
// when the message asks for an upgrade).
func (s *hopSet) hopByHop(k []byte) bool {
	for i, name := range hopHeaders {
		if s.found&(1<<i) != 0 && len(k) == len(name) && bytes.EqualFold(k, name) {
			return !(s.upgrade && 1<<i == hopUpgrade)
		}
	}
	return isAny(k, s.named[:s.nNamed])
}

// dropTrailers removes the trailer fields of a chunked request body that
// fasthttp read, so that none reaches the instance, as nginx forwards
// none: a trailer is a header that comes after the gateway decided on
// the headers (a Forwarded that would pass its rules, say). Cheap when
// there are none, as nearly always.
func dropTrailers(h *fasthttp.RequestHeader) {
	t := h.TrailerHeader()
	if len(t) <= 2 { // "\r\n": none
		if len(h.PeekTrailerKeys()) > 0 {
			h.DelBytes(headerTrailer) // announced, and none came
		}
		return
	}
	var names [][]byte
	for line := range bytes.SplitSeq(t, []byte("\r\n")) {
		if k, _, ok := bytes.Cut(line, []byte(":")); ok {
			names = append(names, append([]byte(nil), k...))
		}
	}
	for _, k := range names {
		h.DelBytes(k)
	}
	h.DelBytes(headerTrailer)
}

var headerTrailer = []byte("Trailer")

// stripResponse removes the hop-by-hop headers of an instance's response,
// and gives it a Date if it has none (RFC 9110 section 6.6.1). keepUpgrade
// keeps Upgrade, for a 101 answer. s is the scan's state, as for
// stripRequest.
func stripResponse(h *fasthttp.ResponseHeader, keepUpgrade bool, s *hopSet) {
	s.reset()
	for k, v := range h.All() {
		s.scan(k, v)
	}
	s.upgrade = keepUpgrade
	if s.found != 0 || s.nNamed > 0 {
		removeFields(h, responseSpecial[:], s.hopByHop)
		s.dropNamedSpecial(h, responseSpecial[:])
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
