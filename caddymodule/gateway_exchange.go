package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// exchange is what eureka_gateway keeps of one routed request, made in
// one allocation where each part was one: the writer that notes the
// response's status (and the wrapper it embeds) and the observation. It
// is not pooled: Caddy's access log reads the observation's fields after
// the handler returned.
type exchange struct {
	w   statusWriter
	rww caddyhttp.ResponseWriterWrapper
	obs observed
}

// newExchange starts the exchange of a request answered on w.
func newExchange(w http.ResponseWriter) *exchange {
	x := &exchange{rww: caddyhttp.ResponseWriterWrapper{ResponseWriter: w}}
	x.w.ResponseWriterWrapper = &x.rww
	return x
}
