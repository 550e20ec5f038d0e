package gateway

import (
	"bytes"
	"net"
	"sync"
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

// closeLingering makes the answer set in ctx the connection's last: it
// says Connection: close, and the connection lingers once it is written.
// fasthttp skips a hijack whose answer says Connection: close, so the
// answer is written here, from a copy: linger must not hold ctx.
func (g *Gateway) closeLingering(ctx *fasthttp.RequestCtx) {
	ctx.SetConnectionClose()
	var out bytes.Buffer
	ctx.Response.WriteTo(&out) // a bytes.Buffer takes every write
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) { g.linger(c, out.Bytes()) })
}

// linger writes the answer, half-closes the connection and reads and
// drops what the client still sends, on the goroutine fasthttp gives the
// hijacked connection; fasthttp closes it when linger returns.
func (g *Gateway) linger(c net.Conn, answer []byte) {
	l := &lingering{c: c}
	if !g.hijacked.add(l) {
		return
	}
	defer g.hijacked.done(l)
	if _, err := c.Write(answer); err != nil {
		return
	}
	unboundReads(c)
	if u, ok := c.(interface{ UnsafeConn() net.Conn }); ok {
		closeWrite(u.UnsafeConn())
	}
	// As large as fasthttp's buffered reader, which the reads go
	// through: it then reads into buf directly.
	buf := make([]byte, bufferSize)
	until := time.Now().Add(lingerTime)
	for {
		deadline := time.Now().Add(lingerTimeout)
		if deadline.After(until) {
			deadline = until
		}
		if !l.arm(deadline) {
			return
		}
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// lingering is a connection being read after its last answer.
type lingering struct {
	c     net.Conn
	mu    sync.Mutex // orders the reads' deadlines before end's
	ended bool
}

// arm bounds the next read by deadline, or reports false once ended.
func (l *lingering) arm(deadline time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended || !time.Now().Before(deadline) {
		return false
	}
	return l.c.SetReadDeadline(deadline) == nil
}

// end cuts the read under way and stops the next.
func (l *lingering) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	l.c.SetReadDeadline(time.Unix(1, 0))
}
