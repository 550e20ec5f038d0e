package httpapi

import (
	"net/http"
	"strconv"
	"strings"
)

// HeaderCSRF is the header a browser page must send with its writes (any
// value): the dashboard's operator actions send it. A page of another site
// cannot: a custom header makes the browser ask the server first (a CORS
// preflight), which this server never approves.
const HeaderCSRF = "Eurekagate-CSRF"

// mediaKind is what a Content-Type names, for the write rules.
type mediaKind uint8

const (
	mediaNone  mediaKind = iota // no Content-Type
	mediaJSON                   // application/json, or any json subtype or +json suffix
	mediaXML                    // application/xml, text/xml, or any xml subtype or +xml suffix
	mediaOther                  // anything else: forms, text/plain, octet streams
)

// kindOf classifies a Content-Type by its media type, parameters aside, so
// that text/plain;x=json is not JSON.
func kindOf(contentType string) mediaKind {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if mt == "" {
		return mediaNone
	}
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || typ == "" || strings.ContainsAny(sub, " \t,/") {
		return mediaOther
	}
	switch {
	case sub == "json" || strings.HasSuffix(sub, "+json"):
		return mediaJSON
	case sub == "xml" || strings.HasSuffix(sub, "+xml"):
		return mediaXML
	}
	return mediaOther
}

// guardWrite applies the rules that keep other web sites from writing to
// the registry through a visitor's browser (cross-site request forgery),
// to every request that is not a GET or HEAD, before its credentials are
// checked:
//
//   - a request with a body (register, the replication batch) needs a JSON
//     or XML Content-Type (the batch: JSON); other writes (heartbeats,
//     cancels, status and metadata updates, which Eureka clients send
//     without a body) need none or a JSON or XML one. A form or text/plain
//     type, or a body without a type, is answered 415. An HTML form or a
//     fetch without a preflight can send only those;
//   - a write from a browser (it carries an Origin or Sec-Fetch-Site
//     header, which Eureka clients do not send) needs the HeaderCSRF
//     header, or is answered 403. It protects credentials that the
//     browser adds by itself (a cached basic-auth password, a cookie, a
//     client certificate) even from a browser that would let a form
//     through.
//
// It reports whether the request may go on.
func guardWrite(req *Request, ep endpoint, resp *Response) bool {
	kind := kindOf(req.ContentType)
	switch {
	case ep == epBatch && req.Method == http.MethodPost && kind != mediaJSON:
		unsupportedType(resp, req.ContentType, "application/json")
		return false
	case req.Method == http.MethodPost && kind != mediaJSON && kind != mediaXML,
		kind == mediaOther,
		kind == mediaNone && len(req.Body) > 0:
		unsupportedType(resp, req.ContentType, "application/json or application/xml")
		return false
	case (req.Origin != "" || req.FetchSite != "") && req.CSRF == "":
		resp.text(http.StatusForbidden, "a write from a browser needs the "+HeaderCSRF+" header (the dashboard sends it)")
		return false
	}
	return true
}

func unsupportedType(resp *Response, contentType, want string) {
	what := "no content type"
	if contentType != "" {
		what = "unsupported media type " + strconv.Quote(contentType)
	}
	resp.text(http.StatusUnsupportedMediaType, what+": send "+want)
}
