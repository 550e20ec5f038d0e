package gateway

import (
	"net"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/routing"
)

// fields reads a fasthttp request header for the traffic rules, without
// copying: the values point into the header, which the rules read before
// the gateway edits it.
type fields struct{ h *fasthttp.RequestHeader }

func (f fields) Field(name string) (string, bool) {
	v := f.h.Peek(name)
	if v == nil {
		return "", false
	}
	return b2s(v), true
}

// ruleRequest is what the traffic rules read of a request.
func (g *Gateway) ruleRequest(h *fasthttp.RequestHeader, remote net.Addr) routing.Request {
	return routing.Request{Method: b2s(h.Method()), Remote: remote, Trusted: g.router.Trusted(remote), Header: fields{h}}
}

// routeLabel is the RouteHeader value for rt's instance: its subset's
// selector, or "".
func routeLabel(rt *routing.Route) string {
	if rt.Subset == nil {
		return ""
	}
	return rt.Subset.Label()
}

func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// s2b returns s's bytes, for fasthttp calls that copy them.
func s2b(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
