package routing

import (
	"net/textproto"
	"strings"
)

// ruleHeader returns the canonical name of a header a rule reads (a
// header condition or a sticky key), or why a rule may not read it: a
// name that is not an HTTP token names no header a request can carry,
// and the headers the gateway sets itself hold a client's forged value
// when the rule reads them, not the one the instance gets.
func ruleHeader(name string) (string, string) {
	for i := 0; i < len(name); i++ {
		if !isToken(name[i]) {
			return "", "is not a header name (an HTTP token: letters, digits and !#$%&'*+-.^_`|~)"
		}
	}
	canon := textproto.CanonicalMIMEHeaderKey(name)
	if gatewayOwned(canon) {
		return "", "is a header the gateway sets itself, in place of a client's, so a rule would read what the client forged: " +
			"to match the client's address use client: [CIDR prefixes or addresses] (it follows a trusted proxy's X-Forwarded-For)"
	}
	return canon, ""
}

// gatewayOwned reports whether the header (canonical) is one of the
// GatewayHeaders, or any other X-Forwarded-* (a proxy's claim the
// instance may trust).
func gatewayOwned(canon string) bool {
	if strings.HasPrefix(canon, "X-Forwarded-") {
		return true
	}
	for _, h := range GatewayHeaders {
		if canon == h {
			return true
		}
	}
	return false
}
