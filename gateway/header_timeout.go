package gateway

import (
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// headerClock bounds the reading of a client's request header as a whole
// on the fasthttp path (ServerConfig.HeaderTimeout), as nginx's
// client_header_timeout does: the idle limit of each read alone would let
// a client that sends a byte a minute hold its connection until the
// header cap. It starts with the first byte of a header and stops at the
// empty line that ends it; the handler's end (headerNext) starts the wait
// for the next one.
//
// It also lets fasthttp read a header that ends in bare line feeds ("\n\n"),
// which RFC 9112 section 2.2 lets a server accept and nginx does: fasthttp
// waits for a CRLFCRLF that never comes, so the clock rewrites that
// terminator into one when it arrives in a single read.
type headerClock struct {
	limit   time.Duration // 0: not a client connection, or no limit
	started int64         // when the header's first byte came (since epoch); 0 while none has
	done    bool          // the header has ended: the body, or the handler, is being read
	lines   int           // lines of the header seen so far, the request line included
	lineLen int           // bytes of the current line, its CR not counted
}

// deadline returns when the read now starting must end at the latest
// because of the header, or 0 when the header does not bound it.
func (h *headerClock) deadline() int64 {
	if h.limit <= 0 || h.done || h.started == 0 {
		return 0
	}
	return h.started + int64(h.limit)
}

// saw scans what a read returned, p[:n] of a buffer of len(p), and returns
// the count after a terminator rewrite.
func (h *headerClock) saw(p []byte, n int) int {
	if h.limit <= 0 || h.done || n == 0 {
		return n
	}
	if h.started == 0 {
		h.started = int64(time.Since(epoch))
	}
	for i := 0; i < n; i++ {
		switch p[i] {
		case '\r':
		case '\n':
			switch {
			case h.lineLen > 0:
				h.lines++
				h.lineLen = 0
			case h.lines > 0:
				// The empty line that ends the header.
				h.done = true
				return h.fixTerminator(p, n, i)
			}
			// An empty line before the request line, which RFC 9112
			// section 2.2 lets a server skip.
		default:
			h.lineLen++
		}
	}
	return n
}

// fixTerminator makes the terminator ending at p[i] a CRLFCRLF, when it
// started in this read and the buffer has room, and returns the new count.
func (h *headerClock) fixTerminator(p []byte, n, i int) int {
	start := h.lastEOL(p, i)
	if start < 0 {
		return n
	}
	const crlf2 = "\r\n\r\n"
	if string(p[start:i+1]) == crlf2 {
		return n
	}
	grow := len(crlf2) - (i + 1 - start)
	if n+grow > len(p) {
		return n
	}
	copy(p[i+1+grow:n+grow], p[i+1:n])
	copy(p[start:], crlf2)
	return n + grow
}

// lastEOL returns where the end of the line before the empty line at p[i]
// begins, if it is in p: the LF before i, with the CR before it if any.
func (h *headerClock) lastEOL(p []byte, i int) int {
	j := i - 1
	if j >= 0 && p[j] == '\r' {
		j--
	}
	if j < 0 || p[j] != '\n' {
		return -1
	}
	if j > 0 && p[j-1] == '\r' {
		j--
	}
	return j
}

// next starts the wait for the next header.
func (h *headerClock) next() {
	h.started, h.done, h.lines, h.lineLen = 0, false, 0, 0
}

// headerNext is what Server's handler calls after Gateway.Handler: the
// connection's next bytes are the next request's header.
func headerNext(ctx *fasthttp.RequestCtx) {
	c := ctx.Conn()
	if u, ok := c.(interface{ UnsafeConn() net.Conn }); ok {
		c = u.UnsafeConn()
	}
	if ic, ok := c.(*idleConn); ok {
		ic.header.next()
	}
}
