package httpapi

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// NewHTTPHandler returns the API as a net/http handler. Requests whose path
// is not an API path get 404; use API.Match to route around it.
func NewHTTPHandler(api *API) http.Handler { return httpHandler{api} }

type httpHandler struct{ api *API }

func (h httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := Request{
		Context: r.Context(),
		Method:  r.Method,
		Path:    r.URL.EscapedPath(),
		Query:   urlArgs(r.URL.Query()),
	}
	readHeaders(&req, r.Header)
	if h.api.certAuth() {
		req.ClientCert = verifiedCert(r.TLS)
	}
	if h.api.auth != nil || h.api.authz != nil {
		req.Client = remoteAddr(r)
		if c, ok := clientOf(r.Context()); ok {
			req.User = c.User
			if c.Addr.IsValid() {
				req.Client = c.Addr
			}
		}
	}
	var resp Response
	if r.Body != nil && r.Method != http.MethodGet && r.Method != http.MethodHead {
		limit := h.api.BodyLimit(req.Path)
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			resp.text(http.StatusRequestEntityTooLarge, "request body larger than "+strconv.FormatInt(limit, 10)+" bytes")
			writeHTTP(w, r, &resp, h.api.node)
			return
		case err != nil:
			resp.text(http.StatusBadRequest, "cannot read request body")
			writeHTTP(w, r, &resp, h.api.node)
			return
		}
		req.Body = body
	}
	h.api.Serve(&req, &resp)
	writeHTTP(w, r, &resp, h.api.node)
}

func writeHTTP(w http.ResponseWriter, r *http.Request, resp *Response, node string) {
	hdr := w.Header()
	writeHeaders(hdr, resp, node)
	hdr.Set("Content-Length", strconv.Itoa(resp.BodyLen()))
	w.WriteHeader(resp.Status)
	if r.Method == http.MethodHead {
		return
	}
	if resp.Payload != nil {
		resp.Payload.WriteTo(admitted(w, resp.Payload))
	} else if len(resp.Body) > 0 {
		w.Write(resp.Body)
	}
}

type urlArgs url.Values

func (a urlArgs) Get(key string) (string, bool) {
	v, ok := a[key]
	if !ok || len(v) == 0 {
		return "", ok
	}
	return v[0], true
}

func (a urlArgs) Each(f func(key, value string)) {
	for k, vs := range a {
		for _, v := range vs {
			f(k, v)
		}
	}
}
