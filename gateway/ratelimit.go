package gateway

import (
	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/routing"
)

// limitHeaders sets a rate limit's headers on its 429, or an open
// circuit breaker's on its 503 (routing.Limited).
func limitHeaders(h *fasthttp.ResponseHeader, l *routing.Limited) {
	if l != nil && (l.Over() || l.Open()) {
		l.Headers(h.Set)
	}
}

// limited adds to an access log line the rate limit a request was
// answered 429 over: "limited", its key ("client", "header:X-Api-Key").
func (l *logLine) limited(label string) {
	l.b = appendJSONString(append(l.b, `,"limited":`...), label)
}
