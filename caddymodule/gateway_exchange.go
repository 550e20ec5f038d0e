package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
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
// sets (the route, the region, the request id, X-Forwarded-Prefix), so
// that setting one does not allocate a slice of its own.
type headerValues struct {
	v [4]string
	n int
}

// set sets h's field key, in canonical form, to v alone; a nil vals, or
// one whose values are taken, allocates the field's slice.
func (vals *headerValues) set(h http.Header, key, v string) {
	if vals == nil || vals.n == len(vals.v) {
		h[key] = []string{v}
		return
	}
	vals.v[vals.n] = v
	// Capped at its one value: an append elsewhere copies it.
	h[key] = vals.v[vals.n : vals.n+1 : vals.n+1]
	vals.n++
}
