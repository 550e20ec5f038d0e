package gateway

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http/httputil"
	"time"

	"github.com/valyala/fasthttp"
)

// smallBody is the size up to which a response body of known length is
// read at once, which hands its connection back to the pool before the
// response goes to the client; a larger one, or one of unknown length,
// streams.
const smallBody = 64 << 10

// maxInterim bounds the informational (1xx) answers read before a
// response.
const maxInterim = 8

// roundTrip sends req to the instance and reads its response into resp.
// When a kept-alive connection turns out to be closed (the instance let it
// go while it was idle), a request that may be sent twice (resend: an
// idempotent one with its body in memory) is sent again on a fresh
// connection; a timeout or a failed dial is left to
// the caller, which tries another instance.
func (u *upstream) roundTrip(req *fasthttp.Request, resp *fasthttp.Response, resend bool, headerTimeout time.Duration) error {
	u.active.Add(1)
	defer u.active.Add(-1)
	retry, err := roundTrip(u.hc, req, resp, headerTimeout)
	if err != nil && retry && resend && !timedOut(err) {
		resetResponse(resp)
		_, err = roundTrip(u.hc, req, resp, headerTimeout)
	}
	return err
}

// roundTrip sends a request on one of the HostClient's pooled connections
// and reads the response: a small body into the response, a larger one
// as a stream that hands the connection back when it is closed, fully
// read. It is fasthttp's own round trip, minus what the gateway does not
// use (URI parsing, per-request timeouts, TLS, connection lifetimes, a
// default User-Agent, resetting the response, which would lose the
// server's settings), plus that choice. retry reports whether the request
// may be sent again: a kept-alive connection broke before an answer.
func roundTrip(hc *fasthttp.HostClient, req *fasthttp.Request, resp *fasthttp.Response, headerTimeout time.Duration) (retry bool, err error) {
	cc, err := hc.AcquireConn(0, false)
	// A pooled connection on which the instance sent something while it
	// was idle (a body after a HEAD answer, a second response, its
	// closing) is closed instead: what it sent would be read as this
	// client's response.
	for err == nil && stale(cc.Conn()) {
		hc.CloseConn(cc)
		cc, err = hc.AcquireConn(0, false)
	}
	if err != nil {
		return false, err
	}
	conn := cc.Conn()
	// Only a kept-alive connection that broke may have been closed by the
	// instance while idle, before it saw the request: a fresh one that
	// breaks is the instance's failure, for the router to decide on.
	ic := pooled(conn)
	reused := ic != nil && ic.used
	bw := hc.AcquireWriter(conn)
	err = req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	hc.ReleaseWriter(bw)
	if err != nil {
		hc.CloseConn(cc)
		return reused, err
	}

	if headerTimeout > 0 {
		// The header's deadline, kept by the connection's idle limit
		// (idleConn) until lifted.
		conn.SetReadDeadline(time.Now().Add(headerTimeout))
	}
	br := hc.AcquireReader(conn)
	if err := readHeader(br, &resp.Header); err != nil {
		hc.ReleaseReader(br)
		hc.CloseConn(cc)
		return reused, err
	}
	if headerTimeout > 0 {
		conn.SetReadDeadline(time.Time{})
	}
	reuse := !resp.ConnectionClose()
	n := resp.Header.ContentLength()
	switch status := resp.StatusCode(); {
	case req.Header.IsHead() || (status >= 100 && status < 200) || status == fasthttp.StatusNoContent || status == fasthttp.StatusNotModified:
		resp.SkipBody = true
	case n >= 0 && n <= smallBody:
		if err := resp.ReadBody(br, 0); err != nil {
			hc.ReleaseReader(br)
			hc.CloseConn(cc)
			return reused, err
		}
	default:
		b := &upstreamBody{br: br, header: &resp.Header, left: n, reuse: reuse && n != -2}
		if n == -1 {
			b.chunked = httputil.NewChunkedReader(br)
		}
		b.release = func(reuse bool) {
			reuse = reusable(conn, br, reuse)
			hc.ReleaseReader(br)
			if reuse {
				hc.ReleaseConn(cc)
			} else {
				hc.CloseConn(cc)
			}
		}
		size := n
		if n < 0 {
			size = -1
		}
		resp.SetBodyStream(b, size)
		return false, nil
	}
	reuse = reusable(conn, br, reuse)
	hc.ReleaseReader(br)
	if reuse {
		hc.ReleaseConn(cc)
	} else {
		hc.CloseConn(cc)
	}
	return false, nil
}

// stale reports whether a connection from the pool must not carry a
// request (see unsolicited).
func stale(c net.Conn) bool {
	ic := pooled(c)
	return ic != nil && ic.used && unsolicited(ic.Conn)
}

// reusable reports whether a connection may go back to the pool after a
// response: the instance did not say to close it, and nothing it sent is
// left unread in br (more than the response's length).
func reusable(c net.Conn, br *bufio.Reader, reuse bool) bool {
	if !reuse || br.Buffered() > 0 {
		return false
	}
	if ic := pooled(c); ic != nil {
		ic.used = true
	}
	return true
}

// readHeader reads a response header, skipping informational answers but
// 101 Switching Protocols.
func readHeader(br *bufio.Reader, h *fasthttp.ResponseHeader) error {
	for range maxInterim {
		if err := h.Read(br); err != nil {
			return err
		}
		if s := h.StatusCode(); s < 100 || s > 199 || s == fasthttp.StatusSwitchingProtocols {
			return nil
		}
	}
	return errors.New("gateway: too many informational responses")
}

// upstreamBody streams a response body from an instance's connection:
// Content-Length bytes, chunks (its trailer fields are added to the
// response's header, which fasthttp writes after the body), or everything
// until the instance closes the connection. Closing it hands the
// connection back to the pool when the body was read to its end, and
// closes it otherwise.
type upstreamBody struct {
	br      *bufio.Reader
	header  *fasthttp.ResponseHeader
	chunked io.Reader
	left    int  // bytes of a Content-Length body still to read
	reuse   bool // the connection may serve another request once done
	done    bool // the body was read to its end
	release func(reuse bool)
	// ended, if set, is called once the body has been read to its end,
	// before its last bytes are returned: the connection can then serve
	// another request before the client has all of this response.
	ended func()
}

// end marks the body read to its end.
func (b *upstreamBody) end() {
	b.done = true
	if b.ended != nil {
		b.ended()
		b.ended = nil
	}
}

func (b *upstreamBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	switch {
	case b.chunked != nil:
		n, err := b.chunked.Read(p)
		if err == io.EOF {
			if terr := b.readTrailer(); terr != nil {
				return n, terr
			}
			b.end()
		}
		return n, err
	case b.left >= 0:
		if b.left == 0 {
			b.end()
			return 0, io.EOF
		}
		if len(p) > b.left {
			p = p[:b.left]
		}
		n, err := b.br.Read(p)
		b.left -= n
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if b.left == 0 && err == nil {
			b.end()
			err = io.EOF
		}
		return n, err
	default: // until the connection closes
		n, err := b.br.Read(p)
		if err == io.EOF {
			b.end()
		}
		return n, err
	}
}

// readTrailer reads the trailer section after the last chunk.
func (b *upstreamBody) readTrailer() error {
	for range 100 {
		line, err := b.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			return nil
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok {
			b.header.AddBytesKV(bytes.TrimSpace(k), bytes.TrimSpace(v))
		}
	}
	return errors.New("gateway: too many trailer fields")
}

// CloseWithError hands the connection back, or closes it when the body
// was not read to its end (or err says the client went away).
func (b *upstreamBody) CloseWithError(err error) error {
	if b.release != nil {
		b.release(b.reuse && b.done && err == nil)
		b.release = nil
	}
	return nil
}
