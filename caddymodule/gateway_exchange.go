package caddymodule

import (
	"net/http"
	"unsafe"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/eurekagate/eurekagate/routing"
)

// exchange is what eureka_gateway keeps of one routed request, made in
// one allocation where each part was one: the writer that notes the
// response's status (and the wrapper it embeds), the observation and the
// values of the header fields the gateway sets. It is not pooled: Caddy's
// access log reads the observation's fields after the handler returned,
// and the request's header keeps the values.
type exchange struct {
	w    statusWriter
	rww  caddyhttp.ResponseWriterWrapper
	obs  observed
	vals headerValues
}

// newExchange starts the exchange of a request answered on w.
func newExchange(w http.ResponseWriter) *exchange {
	x := &exchange{rww: caddyhttp.ResponseWriterWrapper{ResponseWriter: w}}
	x.w.ResponseWriterWrapper = &x.rww
	return x
}

// headerValues holds the values of the request header fields the gateway
// sets (the route, the region, the request id, X-Forwarded-Prefix, and
// prepareOutgoing's: User-Agent, X-Forwarded-For, -Proto and -Host, Via),
// so that setting one does not allocate a slice of its own. The gateway's
// own fields go into the request's header (put), where Caddy's
// placeholders after the gateway read them. prepareOutgoing's, when the
// client did not send them, wait here (set: pending), as reverse_proxy
// adds them to its own copy of the request, out of the placeholders'
// sight: a client's header holds a few fields, and nine more grew its
// map, which cost more than the rest of setting them. The lean client
// writes the pending fields with the header's; net/http's Transport gets
// a copy of the header with them added (addTo). With transport
// reverse_proxy none is pending: prepareOutgoing does not run, and
// reverse_proxy sets the forwarding fields on its own copy. Each field is
// set once a request, the pending ones after the hop-by-hop fields are
// removed (prepareOutgoing), so that none is set again or named by the
// client's Connection.
type headerValues struct {
	v [9]string
	// key[i] is the name of v[i] when it is pending, "" when it is in the
	// header.
	key [9]string
	n   int
	// id holds the bytes of the request id the gateway made, which
	// newRequestID's string is: written once, before the string is made,
	// and never after (idMade).
	id     [32]byte
	idMade bool
}

// newRequestID returns a new request id (routing.AppendRequestID) held
// in vals' own bytes the first time, so that it costs no allocation;
// later a string of its own.
func (vals *headerValues) newRequestID() string {
	if vals.idMade {
		return string(routing.AppendRequestID(nil))
	}
	vals.idMade = true
	b := routing.AppendRequestID(vals.id[:0])
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// set sets the field key, in canonical form, to v alone: in h when h has
// it, else pending in vals. A nil vals, or one whose values are taken,
// sets it in h with a slice of its own.
func (vals *headerValues) set(h http.Header, key, v string) { vals.keep(h, key, v, true) }

// put sets the field key, in canonical form, to v alone in h, never
// pending: a field of the gateway's own, which Caddy's handlers and
// placeholders after the gateway read (a log_append of the request id).
func (vals *headerValues) put(h http.Header, key, v string) { vals.keep(h, key, v, false) }

// keep is set, or put when not pending.
func (vals *headerValues) keep(h http.Header, key, v string, pending bool) {
	if vals == nil || vals.n == len(vals.v) {
		h[key] = []string{v}
		return
	}
	i := vals.n
	vals.n++
	vals.v[i] = v
	if _, ok := h[key]; ok || !pending {
		// Capped at its one value: an append elsewhere copies it.
		h[key] = vals.v[i : i+1 : i+1]
		return
	}
	vals.key[i] = key
}

// pending returns the values of the pending field key (canonical), nil
// when it is not one.
func (vals *headerValues) pending(key string) []string {
	if vals == nil {
		return nil
	}
	for i := range vals.n {
		if vals.key[i] == key {
			return vals.v[i : i+1 : i+1]
		}
	}
	return nil
}

// anyPending reports whether a field is pending.
func (vals *headerValues) anyPending() bool {
	if vals == nil {
		return false
	}
	for i := range vals.n {
		if vals.key[i] != "" {
			return true
		}
	}
	return false
}

// addTo adds the pending fields to h, a copy of the request's header for
// a way of sending it that reads its header alone; they stay pending,
// for the next attempt's.
func (vals *headerValues) addTo(h http.Header) {
	if vals == nil {
		return
	}
	for i := range vals.n {
		if k := vals.key[i]; k != "" {
			h[k] = vals.v[i : i+1 : i+1]
		}
	}
}

// field returns the values of h's field key (canonical) or, when h has
// none, of the pending one, and whether there is either.
func (vals *headerValues) field(h http.Header, key string) ([]string, bool) {
	if vv, ok := h[key]; ok {
		return vv, true
	}
	vv := vals.pending(key)
	return vv, vv != nil
}

// prefixValue is the X-Forwarded-Prefix routing.AppendPrefix makes for a
// request whose client spelled its app name in target, its path as
// written: the start of target when that is the value ("/<name>", the
// client's prior prefix replaced or none), so that it costs no string of
// its own.
func prefixValue(target, prior string, trusted bool, name []byte) string {
	if (!trusted || prior == "") && len(target) > len(name) && target[0] == '/' && target[1:1+len(name)] == string(name) {
		return target[:1+len(name)]
	}
	var buf [128]byte
	return string(routing.AppendPrefix(buf[:0], prior, trusted, name))
}

// tailOf is path, the path the instance gets, as a string: the end of
// target, the client's, when that is it (the usual case: no dot segment
// resolved), so that it costs no string of its own.
func tailOf(target string, path []byte) string {
	if n := len(target) - len(path); n >= 0 && target[n:] == string(path) {
		return target[n:]
	}
	return string(path)
}
