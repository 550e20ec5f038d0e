package gateway

import (
	"bytes"
	"io"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// A connection closed with a request body still coming is closed
// lingering, as nginx's lingering_close: the answer is written, the
// connection half-closed, and what the client still sends is read and
// dropped until it closes its side, pauses lingerTimeout or lingerTime
// has passed. Closed at once with bytes unread, the connection would be
// reset by the kernel, and a client still writing its body could lose
// the answer.
const (
	lingerTime    = 30 * time.Second // nginx's lingering_time
	lingerTimeout = 5 * time.Second  // nginx's lingering_timeout
)

// maxDrain is how much of a body left unread is read and dropped to keep
// its connection: fasthttp's own bound for a body a handler leaves
// (maxUnreadStreamBodySize), and net/http's.
const maxDrain = 256 << 10

// bodyRead counts what is read of a request's streamed body, whoever
// reads it (the forward, an answer's own reading, Config.Other), so that
// settleBody knows what is left of it (some of which fasthttp may hold
// already).
type bodyRead struct {
	r      io.Reader
	want   int // Content-Length, or -1 (chunked)
	n      int
	end    bool // read to its end
	failed bool // the client's read failed: the connection is done
}

func (b *bodyRead) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += n
	switch {
	case err == io.EOF:
		b.end = true
	case err != nil:
		b.failed = true
	}
	return n, err
}

// broke reports whether the client's body failed: a read error, or its
// end before its Content-Length.
func (b *bodyRead) broke() bool { return b.failed || b.end && b.want >= 0 && b.n < b.want }

// countBody puts a bodyRead in front of a request's streamed body.
func countBody(req *fasthttp.Request) *bodyRead {
	b := &bodyRead{r: req.BodyStream(), want: req.Header.ContentLength()}
	req.SetBodyStream(b, b.want)
	return b
}

// settleBody decides, once the answer is set, what becomes of the body
// the handler left unread; clientCloses is the request's own
// Connection: close (or HTTP/1.0 without keep-alive), read before the
// header was stripped.
//
//   - A rest of up to maxDrain by Content-Length, when neither side closes
//     the connection: fasthttp reads and drops it after the answer and
//     keeps the connection.
//   - Another rest that may be short (chunked, or under an answer or a
//     request that closes the connection) is dropped if it comes within
//     arrivedWait: the answer is not held for a slow client. The
//     connection is then kept, or closed as asked.
//   - Otherwise the connection closes lingering.
//
// An answer that streams may read the body as it is written: fasthttp
// decides after it, as it does when the body broke.
func (g *Gateway) settleBody(ctx *fasthttp.RequestCtx, b *bodyRead, clientCloses bool) {
	if b.end || b.failed || ctx.Hijacked() || ctx.Response.IsBodyStream() {
		return
	}
	closing := clientCloses || ctx.Response.ConnectionClose()
	switch {
	case b.want >= 0 && b.want-b.n > maxDrain:
	case !closing && b.want >= 0:
		return
	case dropArrived(ctx, b):
		return
	}
	g.closeLingering(ctx)
}

// arrivedWait is how long dropArrived waits for the rest of a body: what
// is on its way on a LAN when the answer is ready, not a slow client's.
const arrivedWait = 20 * time.Millisecond

// dropArrived reads and drops what is left of b, up to maxDrain, within
// arrivedWait, and reports whether it ended. fasthttp lifts the deadline
// after the handler.
func dropArrived(ctx *fasthttp.RequestCtx, b *bodyRead) bool {
	if ctx.SetReadDeadline(time.Now().Add(arrivedWait)) != nil {
		return false
	}
	_, err := io.CopyN(io.Discard, b, maxDrain+1)
	return err == io.EOF
}

// closeLingering makes the answer set in ctx the connection's last: it
// says Connection: close, and the connection lingers once it is written.
// fasthttp skips a hijack whose answer says Connection: close, so the
// answer is written here, from a copy: linger must not hold ctx.
func (g *Gateway) closeLingering(ctx *fasthttp.RequestCtx) {
	ctx.SetConnectionClose()
	if ctx.IsHead() {
		ctx.Response.SkipBody = true // as fasthttp sets it after the handler
	}
	var out bytes.Buffer
	ctx.Response.WriteTo(&out) // a bytes.Buffer takes every write
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) { g.linger(c, out.Bytes()) })
}

// linger writes the answer, half-closes the connection and reads and
// drops what the client still sends, on the goroutine fasthttp gives the
// hijacked connection; fasthttp closes it when linger returns.
func (g *Gateway) linger(c net.Conn, answer []byte) {
	raw := unhijacked(c)
	l := &lingering{c: raw}
	if !g.hijacked.add(l) {
		return
	}
	defer g.hijacked.done(l)
	unboundReads(c)
	if _, err := c.Write(answer); err != nil {
		return
	}
	closeWrite(raw)
	// As large as fasthttp's buffered reader, which the reads go
	// through: it then reads into buf directly.
	buf := make([]byte, bufferSize)
	until := time.Now().Add(lingerTime)
	for {
		deadline := time.Now().Add(lingerTimeout)
		if deadline.After(until) {
			deadline = until
		}
		if !time.Now().Before(deadline) || c.SetReadDeadline(deadline) != nil {
			return
		}
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// lingering is a connection being read after its last answer.
type lingering struct{ c net.Conn }

// end closes the connection: the write or read under way fails, and so
// does the next (fasthttp's own close then only fails too).
func (l *lingering) end() { l.c.Close() }
