package caddymodule

import (
	"compress/gzip"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"
)

// How the lean client reads an answer: an ordinary one by leanHead, any
// other by net/http's own parser (http.ReadResponse, the one net/http's
// Transport reads with, so that the status line, the headers and the
// body's framing are read alike: Content-Length, chunked with its
// trailers, to the connection's close, none for HEAD, 204 and 304), on
// the connection's reader, the head bounded by maxLeanResponseHead and
// ResponseHeaderTimeout. An answer whose version is not HTTP/1.x, which
// net/http takes, fails the attempt (502).

// readResponse reads the answer to r from c: an informational answer
// is forwarded to the client as reverse_proxy forwards it (103 Early
// Hints, say) but 100 Continue, which is skipped, and the next head
// read, all of them within the one bound; a gzip body the client did not ask for
// is un-gzipped (gzip: the request asked for it). The body reads from
// c.body, which notes its end.
func (c *leanConn) readResponse(w *statusWriter, r *http.Request, headTimeout time.Duration, gzip bool) (*http.Response, error) {
	c.limiting, c.headLeft = true, maxLeanResponseHead
	if headTimeout > 0 {
		c.headDeadline = time.Now().Add(headTimeout)
	}
	defer func() { c.limiting, c.headDeadline = false, time.Time{} }()
	for {
		res, err := c.head.read(c.br, r)
		if res == nil && err == nil {
			res, err = http.ReadResponse(c.br, r)
		}
		if err != nil {
			if c.headLeft <= 0 {
				err = errLeanHeadTooLarge
			}
			return nil, err
		}
		if res.ProtoMajor != 1 { // not HTTP/1 framing (RFC 9112 section 2.3), whatever net/http takes
			return nil, fmt.Errorf("the instance answered %s, not HTTP/1.x", res.Proto)
		}
		code := res.StatusCode
		if code < 100 || code > 199 || code == http.StatusSwitchingProtocols {
			c.body = leanBody{body: res.Body}
			res.Body = &c.body
			if gzip && res.ContentLength != 0 && strings.EqualFold(res.Header.Get("Content-Encoding"), "gzip") { // a body there is, as net/http
				c.gz = leanGzip{src: &c.body}
				res.Body = &c.gz
				res.Header.Del("Content-Encoding")
				res.Header.Del("Content-Length")
				res.ContentLength = -1
				res.Uncompressed = true
			}
			return res, nil
		}
		if code != http.StatusContinue {
			forwardInformational(w, res)
		}
	}
}

// forwardInformational writes an informational answer to the client as
// reverse_proxy does: its headers but the hop-by-hop ones, with the
// response's own so far, which stay for the response alone.
func forwardInformational(w *statusWriter, res *http.Response) {
	h := w.Header()
	own := h.Clone()
	removeHopByHop(res.Header, false)
	for k, vv := range res.Header {
		h[k] = append(h[k], vv...)
	}
	w.WriteHeader(res.StatusCode)
	clear(h)
	maps.Copy(h, own)
}

// leanBody is an answer's body as net/http reads it, noting its end:
// the connection is used again only after its whole answer was read.
// Closing it does nothing: the attempt keeps or closes the connection.
type leanBody struct {
	body io.ReadCloser
	eof  bool
}

func (b *leanBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *leanBody) Close() error { return nil }

// take returns the rest of the body, read, when it is an ordinary
// answer's (leanHead) and wholly in the connection's buffer, else nil
// (nothing read). The bytes stay valid until the connection's next read.
func (b *leanBody) take() []byte {
	f, ok := b.body.(*leanFixed)
	if !ok || b.eof || f.eof || f.left <= 0 || int64(f.br.Buffered()) < f.left {
		return nil
	}
	p, _ := f.br.Peek(int(f.left))
	f.br.Discard(len(p))
	f.left, f.eof, b.eof = 0, true, true
	return p
}

// leanGzip un-gzips a body the client gets as it would through
// net/http's Transport, with a gzip.Reader of gzipReaders.
type leanGzip struct {
	src *leanBody
	zr  *gzip.Reader
	err error
}

func (g *leanGzip) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(g.src)
		} else {
			err = zr.Reset(g.src)
		}
		if err != nil {
			if zr != nil {
				gzipReaders.Put(zr)
			}
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	if err != nil {
		g.err = err
	}
	return n, err
}

func (g *leanGzip) Close() error { return nil }

// release gives the gzip.Reader back.
func (g *leanGzip) release() {
	if g.zr != nil {
		gzipReaders.Put(g.zr)
	}
	*g = leanGzip{}
}

// gzipReaders are the lean client's gzip readers.
var gzipReaders sync.Pool
