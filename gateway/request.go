package gateway

import (
	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/routing"
)

// checkRequest returns the status and reason a request is refused with
// before it is routed (see package routing), or 0. The fasthttp path
// answers it; the loops hand such a request to the fasthttp path.
func checkRequest(h *fasthttp.RequestHeader) (int, string) {
	if r := routing.CheckProtocol(h.Protocol()); r != "" {
		return fasthttp.StatusHTTPVersionNotSupported, r
	}
	if r := routing.CheckTarget(h.RequestURI()); r != "" {
		return fasthttp.StatusBadRequest, r
	}
	if r := routing.CheckHost(h.Host()); r != "" {
		return fasthttp.StatusBadRequest, r
	}
	if r := routing.CheckFields(h.RawHeaders()); r != "" {
		return fasthttp.StatusBadRequest, r
	}
	return 0, ""
}
