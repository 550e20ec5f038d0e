package caddymodule

import (
	"net"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// What the gateway's own transport does to a request's headers before
// its attempts, as reverse_proxy does (its prepareRequest and
// addForwardedHeaders), so that an instance gets the same headers with
// either transport; the gateway's own (route, region, request id,
// X-Forwarded-Prefix, the claims dropped) are set before, by proxy.

// hopHeaders are the hop-by-hop headers, removed in both directions:
// reverse_proxy's list.
var hopHeaders = [...]string{
	"Alt-Svc", "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// isHopHeader reports whether k, canonical, is one of hopHeaders.
func isHopHeader(k string) bool { return slices.Contains(hopHeaders[:], k) }

// removeHopByHop removes from h the headers its Connection header names,
// then hopHeaders; a request's "Te: trailers" stays (request).
func removeHopByHop(h http.Header, request bool) {
	removeConnectionNamed(h, false) // a request's "Connection: te" removes its Te first
	for _, k := range hopHeaders {
		if k == "Te" && request && httpguts.HeaderValuesContainsToken(h["Te"], "trailers") {
			h["Te"] = []string{"trailers"}
			continue
		}
		delete(h, k)
	}
}

// removeConnectionNamed removes from h the headers its Connection header
// names; with skipHop, not those of hopHeaders, which the caller leaves
// out itself (an answer's "Connection: keep-alive" then costs no
// canonical name made and deleted).
func removeConnectionNamed(h http.Header, skipHop bool) {
	for _, v := range h["Connection"] {
		for name := range strings.SplitSeq(v, ",") {
			if name = textproto.TrimString(name); name != "" && !(skipHop && isHopName(name)) {
				h.Del(name)
			}
		}
	}
}

// isHopName reports whether name, in any case, is one of hopHeaders.
func isHopName(name string) bool {
	for _, k := range hopHeaders {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// prepareOutgoing edits r's headers for its instance: the hop-by-hop
// ones removed (an Upgrade kept as Connection: Upgrade and its Upgrade),
// no User-Agent of Go's own added, X-Forwarded-For, -Proto and -Host
// set (extended or kept from a trusted proxy), and Caddy in Via; the
// values of the fields it sets anew are held in vals (see headerValues).
func prepareOutgoing(r *http.Request, trusted, upgrade bool, vals *headerValues) {
	h := r.Header
	var upType string
	if upgrade {
		upType = strings.ToLower(h.Get("Upgrade"))
	}
	removeHopByHop(h, true) // before the pending fields are set: none is named
	if upType != "" {
		h["Connection"] = []string{"Upgrade"}
		h["Upgrade"] = []string{upType}
	}
	if _, ok := h["User-Agent"]; !ok {
		vals.set(h, "User-Agent", "") // net/http would add its own
	}
	setForwarded(r, trusted, vals)
	if prior := h["Via"]; len(prior) > 0 {
		h["Via"] = append(prior, via(r.ProtoMajor, r.ProtoMinor))
	} else {
		vals.set(h, "Via", via(r.ProtoMajor, r.ProtoMinor))
	}
}

// setForwarded sets X-Forwarded-For, -Proto and -Host for the client's
// request; a trusted proxy's X-Forwarded-For is extended, its -Proto and
// -Host kept.
func setForwarded(r *http.Request, trusted bool, vals *headerValues) {
	h := r.Header
	clientIP, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil { // a Unix socket's "@", say: no client address
		if !trusted {
			delete(h, "X-Forwarded-For")
			delete(h, "X-Forwarded-Proto")
			delete(h, "X-Forwarded-Host")
			return
		}
		clientIP = ""
	}
	clientIP, _, _ = strings.Cut(clientIP, "%")
	if prior := h["X-Forwarded-For"]; trusted && len(prior) > 0 && prior[0] != "" {
		v := strings.Join(prior, ", ")
		if clientIP != "" {
			v += ", " + clientIP
		}
		h["X-Forwarded-For"] = []string{v}
	} else if clientIP != "" {
		vals.set(h, "X-Forwarded-For", clientIP)
	}
	proto := "https"
	if r.TLS == nil {
		proto = "http"
	}
	setLast(h, "X-Forwarded-Proto", proto, trusted, vals)
	setLast(h, "X-Forwarded-Host", r.Host, trusted, vals)
}

// setLast sets h's key to v, or, from a trusted proxy, to the last value
// it sent.
func setLast(h http.Header, key, v string, trusted bool, vals *headerValues) {
	if prior := h[key]; trusted && len(prior) > 0 && prior[len(prior)-1] != "" {
		v = prior[len(prior)-1]
	}
	vals.set(h, key, v)
}

// via is the Via field value Caddy adds for a message of that version.
func via(major, minor int) string {
	if major == 1 && minor == 1 {
		return "1.1 Caddy"
	}
	return strconv.Itoa(major) + "." + strconv.Itoa(minor) + " Caddy"
}
