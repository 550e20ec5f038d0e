package caddymodule

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// How the lean client writes a request: the bytes net/http's Transport
// writes for it (Request.write), so that an instance cannot tell the
// two apart. The request line; Host (the client's, else the instance's
// address; an invalid one left empty); User-Agent unless blank (always
// set by prepareOutgoing); Content-Length or Transfer-Encoding: chunked
// as net/http decides them; the other headers by name in sorted order,
// each value's line breaks made spaces and its ends trimmed; then
// Accept-Encoding: gzip when the request has none, no Range and is not
// a HEAD, whose answer the client un-gzips. Head and a body that fits
// the writer go out in one write.

// leanSendable reports whether the lean client sends r as net/http's
// Transport would; the others (trailers, a transfer coding other than
// chunked, a body of unknown length on a method that usually has none,
// which net/http probes) go through it.
func leanSendable(r *http.Request) bool {
	if len(r.Trailer) > 0 {
		return false
	}
	if len(r.TransferEncoding) > 0 && (len(r.TransferEncoding) > 1 || r.TransferEncoding[0] != "chunked") {
		return false
	}
	if r.ContentLength < 0 && len(r.TransferEncoding) == 0 && hasBody(r) {
		switch r.Method {
		case "GET", "HEAD", "DELETE", "OPTIONS", "PROPFIND", "SEARCH":
			return false
		}
	}
	return true
}

// hasBody reports whether r has a body to send.
func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// defaultUserAgent is net/http's, sent when a request has no User-Agent
// at all.
const defaultUserAgent = "Go-http-client/1.1"

// maxSortedHeaders is how many header names are sorted without an
// allocation.
const maxSortedHeaders = 32

// writeRequest sends r's head, its header's fields and the pending ones
// of vals (headerValues), and its body on c, and reports whether it
// asked for gzip. A request the Transport would refuse is refused
// before anything is written.
func (c *leanConn) writeRequest(r *http.Request, vals *headerValues) (gzip bool, err error) {
	var keyBuf [maxSortedHeaders]string
	keys := keyBuf[:0]
	var acceptEncoding, rangeField []string
	for k, vv := range r.Header {
		if err := checkField(k, vv); err != nil {
			return false, err
		}
		switch k {
		case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		case "Accept-Encoding":
			acceptEncoding = vv
		case "Range":
			rangeField = vv
		}
		keys = append(keys, k)
	}
	if vals != nil {
		for i := range vals.n {
			k, vv := vals.key[i], vals.v[i:i+1]
			if k == "" {
				continue
			}
			if err := checkField(k, vv); err != nil {
				return false, err
			}
			if k != "User-Agent" { // the fields skipped above are never pending
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	host := r.Host
	if host == "" {
		host = c.addr
	}
	if host, err = httpguts.PunycodeHostPort(host); err != nil {
		return false, err
	}
	if !httpguts.ValidHostHeader(host) {
		host = ""
	}
	host = removeZone(host)
	u := r.URL
	path, query := u.Opaque, ""
	opaqueScheme := false
	if path == "" {
		if path = u.EscapedPath(); path == "" {
			path = "/"
		}
	} else if strings.HasPrefix(path, "//") {
		opaqueScheme = true
	}
	if u.ForceQuery || u.RawQuery != "" {
		query = u.RawQuery
	}
	if hasCTL(path) || hasCTL(query) {
		return false, fmt.Errorf("net/http: can't write control character in Request.URL")
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	} else if !httpguts.ValidHeaderFieldName(method) { // a token, as net/http's validMethod
		return false, fmt.Errorf("net/http: invalid method %q", method)
	}

	bw := c.bw
	bw.WriteString(method)
	bw.WriteByte(' ')
	if opaqueScheme {
		bw.WriteString("http:")
	}
	bw.WriteString(path)
	if u.ForceQuery || u.RawQuery != "" {
		bw.WriteByte('?')
		bw.WriteString(query)
	}
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(host)
	bw.WriteString("\r\n")
	ua := defaultUserAgent
	if vv, ok := vals.field(r.Header, "User-Agent"); ok {
		ua = ""
		if len(vv) > 0 {
			ua = vv[0]
		}
	}
	if ua != "" {
		writeField(bw, "User-Agent", ua)
	}

	body := io.Reader(nil)
	if hasBody(r) {
		body = r.Body
	}
	length := int64(0)
	chunked := false
	if body != nil {
		length = r.ContentLength
		chunked = length < 0 // chunked as it came, or of unknown length
	}
	switch {
	case chunked:
		bw.WriteString("Transfer-Encoding: chunked\r\n")
	case length > 0 || method == "POST" || method == "PUT" || method == "PATCH":
		var num [20]byte
		bw.WriteString("Content-Length: ")
		bw.Write(strconv.AppendInt(num[:0], length, 10))
		bw.WriteString("\r\n")
	}
	for _, k := range keys {
		vv, _ := vals.field(r.Header, k)
		for _, v := range vv {
			writeField(bw, k, v)
		}
	}
	gzip = method != http.MethodHead && firstValue(acceptEncoding) == "" && firstValue(rangeField) == ""
	if gzip {
		bw.WriteString("Accept-Encoding: gzip\r\n")
	}
	bw.WriteString("\r\n")
	if body == nil {
		return gzip, bw.Flush()
	}
	if chunked || length > int64(bw.Available()) {
		// The head first, as net/http sends it, so that the instance
		// may begin while a long body comes.
		if err := bw.Flush(); err != nil {
			return gzip, err
		}
	}
	if chunked {
		return gzip, writeChunked(bw, body)
	}
	n, err := io.Copy(bw, io.LimitReader(clientBody{body}, length))
	if err != nil {
		return gzip, err
	}
	if n != length {
		return gzip, fmt.Errorf("http: ContentLength=%d with Body length %d", length, n)
	}
	return gzip, bw.Flush()
}

// checkField returns the error net/http's Transport refuses the field k
// with the values vv with, nil when it sends it.
func checkField(k string, vv []string) error {
	if !httpguts.ValidHeaderFieldName(k) {
		return fmt.Errorf("net/http: invalid header field name %q", k)
	}
	for _, v := range vv {
		if !httpguts.ValidHeaderFieldValue(v) {
			return fmt.Errorf("net/http: invalid header field value for %q", k)
		}
	}
	return nil
}

// firstValue is vv's first value, as Header.Get gives it.
func firstValue(vv []string) string {
	if len(vv) == 0 {
		return ""
	}
	return vv[0]
}

// writeField writes one header field line, as net/http's Header.write
// does a valid one (httpguts.ValidHeaderFieldValue: without a line
// break, which net/http would make a space).
func writeField(bw *bufio.Writer, k, v string) {
	v = textproto.TrimString(v)
	bw.WriteString(k)
	bw.WriteString(": ")
	bw.WriteString(v)
	bw.WriteString("\r\n")
}

// writeChunked sends body in chunks, each flushed as it is read (as
// net/http streams a request body of unknown length), then the last
// chunk.
func writeChunked(bw interface {
	io.Writer
	WriteString(string) (int, error)
	Flush() error
}, body io.Reader) error {
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	buf := *bp
	var size [16]byte
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			bw.Write(strconv.AppendInt(size[:0], int64(n), 16))
			bw.WriteString("\r\n")
			bw.Write(buf[:n])
			bw.WriteString("\r\n")
			if err := bw.Flush(); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return bodyReadError{rerr}
		}
	}
	bw.WriteString("0\r\n\r\n")
	return bw.Flush()
}

// bodyReadError is a failure to read the request's body from the
// client, not to write it to the instance: the instance, which did not
// get the whole request, is not waited for.
type bodyReadError struct{ error }

func (e bodyReadError) Unwrap() error { return e.error }

// clientBody is a request's body whose read errors are bodyReadErrors.
type clientBody struct{ r io.Reader }

func (b clientBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = bodyReadError{err}
	}
	return n, err
}

// hasCTL reports whether s has a control character.
func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < ' ' || b == 0x7f {
			return true
		}
	}
	return false
}

// removeZone removes an IPv6 zone from host ("[fe80::1%en0]:8080" to
// "[fe80::1]:8080"), as net/http does (RFC 6874).
func removeZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	i := strings.LastIndex(host, "]")
	if i < 0 {
		return host
	}
	j := strings.LastIndex(host[:i], "%")
	if j < 0 {
		return host
	}
	return host[:j] + host[i:]
}
