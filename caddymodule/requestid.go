package caddymodule

import (
	"net/http"

	"github.com/eurekagate/eurekagate/routing"
)

// setRequestID leaves h one X-Request-Id for the instance, as the
// fasthttp gateway does: the client's first when routing.KeepRequestID
// keeps it (trusted: the client is one of the server's trusted_proxies;
// else of the safe form), else a new one (its value and its bytes kept in
// vals, see headerValues), in h, never pending: Caddy's placeholders
// ({http.request.header.X-Request-Id}, in a log_append say) read it there.
func setRequestID(h http.Header, trusted bool, vals *headerValues) {
	ids := h[routing.RequestIDHeader]
	if len(ids) > 0 && routing.KeepRequestID(ids[0], trusted) {
		if len(ids) > 1 {
			vals.put(h, routing.RequestIDHeader, ids[0])
		}
		return
	}
	vals.put(h, routing.RequestIDHeader, vals.newRequestID())
}
