package httpapi

// The front doors' one mapping between HTTP and Request and Response:
// which request headers fill which Request fields (readHeaders), and which
// response headers a Response sets (writeHeaders). Both front doors
// (FastHTTPHandler in frontdoor_fasthttp.go, for the standalone server;
// NewHTTPHandler in frontdoor_nethttp.go, for net/http and so Caddy's
// eureka_server) call them through a small accessor of their own
// headers: headerReader and headerWriter, which http.Header and fasthttp's
// headers satisfy without allocating. What each front door does on its
// own is only what its transport decides: the request's context, the path
// as sent, the query, the body (read within BodyLimit), the client
// certificate, and framing (Content-Length, HEAD, streaming).

// The request headers the API reads, in canonical form, so that
// http.Header finds them without canonicalizing a copy (HeaderCSRF is
// "Eurekagate-CSRF" as browsers are told to send it; header names match
// case-insensitively).
const (
	hdrAccept          = "Accept"
	hdrAcceptEncoding  = "Accept-Encoding"
	hdrContentType     = "Content-Type"
	hdrContentEncoding = "Content-Encoding"
	hdrAuthorization   = "Authorization"
	hdrOrigin          = "Origin"
	hdrFetchSite       = "Sec-Fetch-Site"
	hdrCSRF            = "Eurekagate-Csrf"
	// hdrReplication marks Eureka's direct (non-batch) replication calls
	// when its value is "true".
	hdrReplication = "X-Netflix-Discovery-Replication"
)

// The response headers the API sets besides Content-Type, Content-Encoding
// and its own (HeaderWatch, HeaderNode, HeaderVersion).
const (
	hdrChallenge  = "WWW-Authenticate"
	hdrRetryAfter = "Retry-After"
	hdrVary       = "Vary"
)

// headerReader reads a request header by name: its first value, or "".
// http.Header satisfies it, and fastRequestHeader for fasthttp.
type headerReader interface {
	Get(name string) string
}

// headerWriter sets and adds response headers. http.Header and
// *fasthttp.ResponseHeader satisfy it.
type headerWriter interface {
	Set(name, value string)
	Add(name, value string)
}

// readHeaders fills the Request fields that come from request headers.
func readHeaders(req *Request, h headerReader) {
	req.Accept = h.Get(hdrAccept)
	req.AcceptEncoding = h.Get(hdrAcceptEncoding)
	req.ContentType = h.Get(hdrContentType)
	req.ContentEncoding = h.Get(hdrContentEncoding)
	req.Replication = h.Get(hdrReplication) == "true"
	req.Authorization = h.Get(hdrAuthorization)
	req.Origin = h.Get(hdrOrigin)
	req.FetchSite = h.Get(hdrFetchSite)
	req.CSRF = h.Get(hdrCSRF)
}

// writeHeaders sets the response headers of resp, as the API at node
// answers it.
//
// Vary: a gzipped answer (Content-Encoding set, which the API does only
// when Accept-Encoding asks for gzip) adds "Vary: Accept-Encoding", so a
// cache in between keeps the plain and the gzipped answers apart. Java's
// Eureka sends no Vary; clients ignore it. It is added, never set, so a
// Vary that a handler before the API wrote (in Caddy) is kept.
func writeHeaders(h headerWriter, resp *Response, node string) {
	if resp.ContentType != "" {
		h.Set(hdrContentType, resp.ContentType)
	}
	if resp.ContentEncoding != "" {
		h.Set(hdrContentEncoding, resp.ContentEncoding)
		h.Add(hdrVary, hdrAcceptEncoding)
	}
	if resp.Challenge != "" {
		h.Set(hdrChallenge, resp.Challenge)
	}
	if resp.RetryAfter != "" {
		h.Set(hdrRetryAfter, resp.RetryAfter)
	}
	h.Set(HeaderWatch, WatchVersion)
	h.Set(HeaderNode, node)
	if resp.Version != "" {
		h.Set(HeaderVersion, resp.Version)
	}
	if resp.Syncing {
		h.Set(HeaderSyncing, "true")
	}
}
