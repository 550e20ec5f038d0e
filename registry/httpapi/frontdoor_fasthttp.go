package httpapi

import (
	"errors"
	"net"
	"strconv"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// FastHTTPHandler returns the API as a fasthttp handler, for the standalone
// server. A server that serves it should call api.Close when it stops, so
// the watches it holds end at once. Set the server's MaxRequestBodySize to api.MaxBodyBytes() and its
// ErrorHandler to FastHTTPErrorHandler so oversized bodies get 413.
func FastHTTPHandler(api *API) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		req := Request{
			// Not the RequestCtx: a context derived from it gets a goroutine
			// that outlives the request and reads the recycled ctx. The
			// API's own context ends at API.Close, which the standalone
			// Server calls when it stops.
			Context: api.closed,
			Method:  methodString(ctx.Request.Header.Method()),
			// The path is copied: the API may keep strings derived from it.
			Path:  string(ctx.Request.URI().PathOriginal()),
			Query: (*fastArgs)(ctx.QueryArgs()),
			Body:  ctx.Request.Body(),
		}
		readHeaders(&req, (*fastRequestHeader)(&ctx.Request.Header))
		if api.certAuth() && ctx.IsTLS() {
			req.ClientCert = verifiedCert(ctx.TLSConnectionState())
		}
		if api.auth != nil || api.authz != nil {
			req.Client = tcpAddr(ctx.RemoteAddr())
		}
		var resp Response
		api.Serve(&req, &resp)
		ctx.SetStatusCode(resp.Status)
		if resp.ContentType == "" {
			ctx.Response.Header.SetNoDefaultContentType(true)
		}
		writeHeaders(&ctx.Response.Header, &resp, api.node)
		setBody(ctx, &resp)
	}
}

// FastHTTPErrorHandler answers request errors found by the fasthttp server
// before the handler runs: 413 for a body over MaxRequestBodySize, 431 for
// headers over ReadBufferSize, 408 for a request still incomplete at the
// read timeout, 400 for other malformed requests.
func FastHTTPErrorHandler(maxBody int64) func(*fasthttp.RequestCtx, error) {
	return func(ctx *fasthttp.RequestCtx, err error) {
		var small *fasthttp.ErrSmallBuffer
		var netErr net.Error
		switch {
		case errors.Is(err, fasthttp.ErrBodyTooLarge):
			ctx.Error("request body larger than "+strconv.FormatInt(maxBody, 10)+" bytes", fasthttp.StatusRequestEntityTooLarge)
		case errors.As(err, &small):
			ctx.Error("request header too large", fasthttp.StatusRequestHeaderFieldsTooLarge)
		case errors.As(err, &netErr) && netErr.Timeout():
			ctx.Error("request timeout: the request did not arrive in time", fasthttp.StatusRequestTimeout)
		default:
			ctx.Error("cannot parse request", fasthttp.StatusBadRequest)
		}
	}
}

// methodString returns the method as a constant string, without allocating.
func methodString(m []byte) string {
	switch string(m) {
	case "GET":
		return "GET"
	case "PUT":
		return "PUT"
	case "POST":
		return "POST"
	case "DELETE":
		return "DELETE"
	case "HEAD":
		return "HEAD"
	}
	return string(m)
}

// transient views b as a string without copying. Only for values the API
// reads during the request and never keeps.
func transient(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// fastRequestHeader is fasthttp's request header as a headerReader: the
// values are transient views, which the API reads during the request and
// never keeps.
type fastRequestHeader fasthttp.RequestHeader

func (h *fastRequestHeader) Get(name string) string {
	return transient((*fasthttp.RequestHeader)(h).Peek(name))
}

type fastArgs fasthttp.Args

// Get returns a transient view of the value; the API only parses it.
func (a *fastArgs) Get(key string) (string, bool) {
	args := (*fasthttp.Args)(a)
	if !args.Has(key) {
		return "", false
	}
	return transient(args.Peek(key)), true
}

// Each passes copies, since callers keep them (metadata updates).
func (a *fastArgs) Each(f func(key, value string)) {
	for k, v := range (*fasthttp.Args)(a).All() {
		f(string(k), string(v))
	}
}

// setBody hands the body to fasthttp without copying it: a one-part
// document or an API-made body as is, a document of many parts as a
// stream that fasthttp writes through its per-connection buffer. So a
// connection holds a small buffer, not a copy of the registry, however
// slowly it reads.
func setBody(ctx *fasthttp.RequestCtx, resp *Response) {
	switch {
	case resp.Payload == nil:
		ctx.Response.SetBodyRaw(resp.Body)
	case !resp.Payload.Compressed() && len(resp.Payload.Parts()) == 1:
		ctx.Response.SetBodyRaw(resp.Payload.Parts()[0])
	default:
		ctx.Response.SetBodyStream(admittedReader(resp.Payload), resp.Payload.Len())
	}
}
