package routing

import (
	"net"
	"net/netip"
	"strings"
)

// A Request is what traffic rules read of a request besides its target:
// the transports fill one in from their own request type, on the stack.
type Request struct {
	// Method is the request's method.
	Method string
	// Remote is the address of the client's connection.
	Remote net.Addr
	// ClientIP, when not empty, is the client's address as the host
	// worked it out (Caddy's client_ip, which follows its
	// trusted_proxies); Remote is then not read.
	ClientIP string
	// Trusted says the client is one of the TrustedProxies (see
	// Router.Trusted): its X-Forwarded-For names the client a rule's
	// client condition reads, and its RouteHeader is honoured.
	Trusted bool
	// Header reads the request's header fields.
	Header Header

	// The fields the rules read so far: twenty rules on one header read
	// it once.
	seen  [8]seenField
	nSeen int
}

type seenField struct {
	name, value string
	ok          bool
}

// Header reads a request's header fields. The transports adapt their own
// header types (net/http's, fasthttp's) to it without copying.
type Header interface {
	// Field returns the first value of the field name (canonical, as
	// net/http writes it: "X-User-Id") and whether the request has it.
	Field(name string) (string, bool)
}

// field returns a header field, none when req has no Header.
func (req *Request) field(name string) (string, bool) {
	if req == nil || req.Header == nil {
		return "", false
	}
	for i := range req.nSeen {
		if f := &req.seen[i]; f.name == name {
			return f.value, f.ok
		}
	}
	v, ok := req.Header.Field(name)
	if req.nSeen < len(req.seen) {
		req.seen[req.nSeen] = seenField{name, v, ok}
		req.nSeen++
	}
	return v, ok
}

// client returns the client's address: the connection's, or, from a
// trusted proxy, the last address its X-Forwarded-For names.
func (req *Request) client() netip.Addr {
	if req == nil {
		return netip.Addr{}
	}
	if req.ClientIP != "" {
		ip, _ := netip.ParseAddr(req.ClientIP)
		return ip.Unmap()
	}
	if req.Trusted {
		if xff, ok := req.field("X-Forwarded-For"); ok {
			last := xff[strings.LastIndexByte(xff, ',')+1:]
			if ip, err := netip.ParseAddr(strings.TrimSpace(last)); err == nil {
				return ip.Unmap()
			}
		}
	}
	if a, ok := req.Remote.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}

// cookie returns the value of the cookie name in a Cookie field.
func cookie(field, name string) (string, bool) {
	for field != "" {
		var pair string
		pair, field, _ = strings.Cut(field, ";")
		pair = strings.TrimLeft(pair, " \t")
		k, v, ok := strings.Cut(pair, "=")
		if !ok || k != name {
			continue
		}
		v = strings.TrimRight(v, " \t")
		if len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		return v, true
	}
	return "", false
}

// queryParam returns the raw (still escaped) value of the parameter name
// in target's query, and whether it is there.
func queryParam(target []byte, name string) ([]byte, bool) {
	q := target
	for i, c := range target {
		if c == '?' {
			q = target[i+1:]
			break
		}
		if i == len(target)-1 {
			return nil, false
		}
	}
	for len(q) > 0 {
		pair := q
		for i, c := range q {
			if c == '&' {
				pair, q = q[:i], q[i+1:]
				break
			}
			if i == len(q)-1 {
				q = nil
			}
		}
		k, v := pair, []byte(nil)
		for i, c := range pair {
			if c == '=' {
				k, v = pair[:i], pair[i+1:]
				break
			}
		}
		if unescapedEqual(k, name) {
			return v, true
		}
	}
	return nil, false
}

// unescape appends the percent-decoded form of a query component ('+' is
// a space) to dst.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
			c = ' '
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
		}
		dst = append(dst, c)
	}
	return dst
}

// unescapedEqual reports whether the query component s decodes to name.
func unescapedEqual(s []byte, name string) bool {
	var buf [128]byte
	if len(s) > len(buf) {
		return false
	}
	return string(unescape(buf[:0], s)) == name
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
