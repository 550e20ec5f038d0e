package routing

// CheckProtocol returns why a request's protocol (as its request line
// has it) is refused, or "" for HTTP/1.1 and HTTP/1.0. The gateway speaks
// HTTP/1.x to the instances and would otherwise pass another version on
// as it came; nginx answers such a request 505.
func CheckProtocol[T text](proto T) string {
	if string(proto) == "HTTP/1.1" || string(proto) == "HTTP/1.0" {
		return ""
	}
	return "HTTP version not supported"
}

// CheckHost returns why a Host value is refused, or "" when it is a
// uri-host with an optional port (RFC 9110 section 7.2): a reg-name (the
// unreserved characters and sub-delims), an IPv4 address,
// or an IP literal in brackets. An empty Host passes: HTTP/1.0 needs none,
// and HTTP/1.1 without one is refused by the HTTP parser first.
func CheckHost[T text](host T) string {
	i := 0
	if len(host) > 0 && host[0] == '[' {
		for i = 1; i < len(host) && host[i] != ']'; i++ {
			if c := host[i]; !isHex(c) && c != ':' && c != '.' && c != 'v' && c != 'V' && !isUnreserved(c) && !isSubDelim(c) {
				return "the Host header is not a host name"
			}
		}
		if i == len(host) {
			return "the Host header is not a host name"
		}
		i++
	} else {
		for ; i < len(host) && host[i] != ':'; i++ {
			// No percent escapes: RFC 3986 allows them in a reg-name, but
			// no DNS name has one, and fasthttp's URI parser refuses them.
			if c := host[i]; !isUnreserved(c) && !isSubDelim(c) {
				return "the Host header is not a host name"
			}
		}
	}
	if i == len(host) {
		return ""
	}
	if host[i] != ':' {
		return "the Host header is not a host name"
	}
	for i++; i < len(host); i++ {
		if c := host[i]; c < '0' || c > '9' {
			return "the Host header has a malformed port"
		}
	}
	return ""
}

// CheckFields returns why a request's header section (its field lines,
// without the request line, each ending in CRLF or LF) is refused, or ""
// when every line is a field-name, a colon and a value. A line that starts
// with a space or a tab continues the previous one (obs-fold), which RFC
// 9112 section 5.2 lets a server refuse and which servers join in
// different ways; a field name with a space or another non-token
// character is read differently by different servers too. nginx refuses
// both.
func CheckFields[T text](raw T) string {
	// One pass: each line's name is read up to its colon, and the value
	// skipped to the line's end.
	for len(raw) > 0 {
		i := 0
		for i < len(raw) && tokens[raw[i]] {
			i++
		}
		if i < len(raw) && raw[i] == ':' && i > 0 {
			for i < len(raw) && raw[i] != '\n' {
				i++
			}
			if i == len(raw) {
				return ""
			}
			raw = raw[i+1:]
			continue
		}
		// No name and a colon: the name's end, or the line's, says why.
		lineEnd := i == len(raw) || raw[i] == '\n' || (raw[i] == '\r' && (i+1 == len(raw) || raw[i+1] == '\n'))
		switch {
		case i == 0 && lineEnd:
			return "" // the empty line that ends the header section
		case i == 0 && (raw[0] == ' ' || raw[0] == '\t'):
			return "a header line is folded onto the one before it"
		case lineEnd || raw[i] == ':':
			return "a header line has no name or no colon"
		}
		return "a header name has a character a name may not have"
	}
	return ""
}

// HasUnderscore reports whether a field name has an underscore. Such
// names are dropped: CGI, WSGI and Rack turn both X-Forwarded-For and
// X_Forwarded_For into HTTP_X_FORWARDED_FOR, so a client could set a
// header the gateway means to set, past its rules (nginx drops them by
// default, underscores_in_headers off).
func HasUnderscore[T text](name T) bool {
	for i := 0; i < len(name); i++ {
		if name[i] == '_' {
			return true
		}
	}
	return false
}

// isToken reports whether c may stand in a token (RFC 9110 section 5.6.2).
func isToken(c byte) bool { return tokens[c] }

// tokens are the bytes a token may have, by value.
var tokens = func() (t [256]bool) {
	for c := range t {
		t[c] = tokenByte(byte(c))
	}
	return t
}()

func tokenByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func isSubDelim(c byte) bool {
	switch c {
	case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
		return true
	}
	return false
}

// ClientClaims are the headers that say who the client is, or how it
// reached the gateway, beside the X-Forwarded-For, -Proto, -Host and
// -Prefix that the gateways set themselves: only a trusted proxy's pass.
// Spring's ForwardedHeaderFilter prefers Forwarded to X-Forwarded-*,
// Tomcat's RemoteIpValve and many others read X-Real-IP or True-Client-IP,
// and X-Forwarded-Port and -Ssl make an instance build links to another
// port or scheme. nginx, which sets none of them, passes none of a
// client's on either (it rewrites what it proxies).
var ClientClaims = [...]string{"Forwarded", "X-Real-Ip", "X-Forwarded-Port", "X-Forwarded-Ssl", "True-Client-Ip"}
