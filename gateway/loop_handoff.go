package gateway

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http/httputil"
	"os"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/valyala/fasthttp"
	"go.uber.org/zap"
)

// handoff gives a client's connection, with the bytes read of it, to
// fasthttp, which serves it from then on. It returns gnet.Close for the
// loop's copy of the connection; while a response is still being flushed
// to the client it waits (the tick tries again).
func (lp *loopState) handoff(cc *clientConn) gnet.Action {
	if cc.c.OutboundBuffered() > 0 {
		cc.handoff = true
		return gnet.None
	}
	buf, _ := cc.c.Peek(-1)
	prefix := append(cc.prefix, buf...)
	cc.prefix = nil
	nc, err := fileConn(cc.c)
	lp.forget(cc)
	if err != nil {
		lp.l.g.cfg.Logger.Warn("gateway: handing a connection to fasthttp", zap.Error(err))
		return gnet.Close
	}
	lp.l.handoff.push(&prefixConn{Conn: nc, prefix: prefix})
	return gnet.Close
}

// stream hands a response that is long, chunked or of unknown length to
// a goroutine that streams it to the client; the client's connection then
// goes on in fasthttp, and the instance's is closed.
func (lp *loopState) stream(up *upConn, ex *exchange) gnet.Action {
	cc := ex.cc
	if cc.c.OutboundBuffered() > 0 {
		// An earlier pipelined response is still being flushed: the
		// stream would overtake it. Rare enough to refuse.
		lp.close(cc)
		return gnet.Close
	}
	upBuf, _ := up.c.Peek(-1)
	upPrefix := append([]byte(nil), upBuf...)
	clBuf, _ := cc.c.Peek(-1)
	clPrefix := append([]byte(nil), clBuf...)
	upNC, err := fileConn(up.c)
	var clNC net.Conn
	if err == nil {
		clNC, err = fileConn(cc.c)
		if err != nil {
			upNC.Close()
		}
	}
	up.ex, up.gone = nil, true
	ex.up = nil
	closing := cc.closing || lp.l.stopping.Load()
	end := ex.end
	ex.end = nil
	inst, app, try := ex.inst, ex.app, ex.try
	key, addr := up.key, up.addr
	// Counted when its header came: the body streams from a goroutine,
	// which logs it once it has gone.
	line := ex.obs.answeredAt(&ex.h, lp.respH.StatusCode(), lp.wall)
	if line != nil {
		line = line.detached()
	}
	cc.ex = nil
	lp.recycle(ex)
	lp.forget(cc)
	lp.el.Close(cc.c)
	if err != nil {
		lp.l.g.cfg.Logger.Warn("gateway: streaming a response", zap.Error(err))
		if end != nil {
			end()
		}
		if line != nil {
			line.finish(0)
		}
		return gnet.Close
	}
	l := lp.l
	l.work.Add(1)
	go func() {
		defer l.work.Done()
		// Both connections go back to the loop when they can: the
		// instance's to its pool as soon as its response is read, before
		// the client has all of it and can ask again; the client's once
		// the response is written, to be served there.
		released := false
		release := func(reusable bool) {
			released = true
			if !reusable || !lp.enroll(&upConn{lp: lp, key: key, addr: addr, reused: true}, upNC) {
				upNC.Close()
			}
		}
		size, err := l.streamResponse(&prefixConn{Conn: upNC, prefix: upPrefix}, clNC, closing, release)
		if !released {
			release(false)
		}
		if line != nil {
			line.finish(size)
		}
		if end != nil {
			end()
		}
		if err != nil {
			l.g.cfg.Logger.Info("gateway: streaming a response", zap.String("app", app), zap.String("instance", inst.ID()), zap.Error(err))
			clNC.Close()
			return
		}
		try.Succeeded()
		switch {
		case closing || l.stopping.Load():
			clNC.Close()
		case len(clPrefix) == 0:
			if !lp.enroll(nil, clNC) {
				clNC.Close()
			}
		default: // it sent more meanwhile: fasthttp reads it
			l.handoff.push(&prefixConn{Conn: clNC, prefix: clPrefix})
		}
	}()
	return gnet.Close
}

// enroll adds a connection to the loop: an instance's (up) to its pool, or
// a client's (up nil). The loop takes its own copy of the socket and c is
// closed. It returns once the loop holds the connection (or, if the loop
// does not take it within DialTimeout, stopping, then): gnet enrolls
// from a pool of goroutines, in no set order, and the instance's
// connection must be in its pool before the client, given its own back,
// can send the request that would reuse it.
func (lp *loopState) enroll(up *upConn, c net.Conn) bool {
	var v any
	if up != nil {
		v = up
	}
	ch, err := lp.el.Enroll(gnet.NewContext(context.Background(), v), c)
	if err != nil {
		return false
	}
	select {
	case r := <-ch:
		return r.Err == nil
	case <-time.After(lp.l.g.cfg.Routing.DialTimeout):
		return true // the loop has it queued; closing c now would not stop that
	}
}

// streamResponse reads a response from an instance's connection and
// writes it to the client: the header as the instance sent it (its Date,
// no Content-Type added, hop-by-hop fields removed), then the body, framed
// by its length or else in chunks (trailer fields after the last). Once
// the response is read to its end, before its last bytes are written, it
// calls release with whether the instance's connection may carry another
// request (and reads no more of upstream); on an error before, it does
// not call it. It returns the bytes of body written.
func (l *loops) streamResponse(upstream, client net.Conn, closing bool, release func(reusable bool)) (size int64, err error) {
	up := &idleConn{Conn: upstream, read: l.g.cfg.Routing.ReadTimeout, write: l.g.cfg.Routing.ReadTimeout}
	br := bufio.NewReaderSize(up, bufferSize)
	var h, trailer fasthttp.ResponseHeader
	h.SetNoDefaultContentType(true)
	trailer.SetNoDefaultContentType(true)
	if err := readHeader(br, &h); err != nil {
		return 0, err
	}
	n := h.ContentLength()
	body := &upstreamBody{br: br, header: &trailer, left: n, reuse: n != -2 && !h.ConnectionClose()}
	body.ended = func() { release(body.reuse && br.Buffered() == 0) }
	if n == -1 {
		body.chunked = httputil.NewChunkedReader(br)
	}
	stripResponse(&h, false, new(hopSet))
	if n < 0 {
		h.SetContentLength(-1)
	}
	if closing {
		h.SetConnectionClose()
	}
	bw := bufio.NewWriterSize(&idleConn{Conn: client, write: l.cfg.WriteTimeout}, bufferSize)
	bw.Write(appendResponse(nil, &h))
	if n >= 0 {
		size, err = io.Copy(bw, body)
	} else {
		cw := httputil.NewChunkedWriter(bw)
		if size, err = io.Copy(cw, body); err == nil {
			err = cw.Close() // the last chunk
		}
		if err == nil {
			for k, v := range trailer.All() {
				bw.Write(append(append(append(append([]byte(nil), k...), ": "...), v...), "\r\n"...))
			}
			bw.WriteString("\r\n")
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	return size, err
}

// fileConn returns a net.Conn on a duplicate of c's socket, which stays
// open when the loop closes c.
func fileConn(c gnet.Conn) (net.Conn, error) {
	fd, err := c.Dup()
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "")
	defer f.Close()
	return net.FileConn(f)
}

// prefixConn reads prefix before what the connection brings.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// CloseWrite half-closes the connection (tunnels use it).
func (c *prefixConn) CloseWrite() error { return closeWrite(c.Conn) }

// handoffListener is the listener fasthttp serves: it accepts the
// connections the loops hand over. push never blocks a loop.
type handoffListener struct {
	addr   net.Addr
	mu     sync.Mutex
	queue  []net.Conn
	closed bool
	ready  chan struct{} // a value when the queue may have a connection
	done   chan struct{}
}

func newHandoffListener() *handoffListener {
	return &handoffListener{ready: make(chan struct{}, 1), done: make(chan struct{})}
}

func (l *handoffListener) push(c net.Conn) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		c.Close()
		return
	}
	l.queue = append(l.queue, c)
	l.mu.Unlock()
	select {
	case l.ready <- struct{}{}:
	default:
	}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return nil, net.ErrClosed
		}
		if len(l.queue) > 0 {
			c := l.queue[0]
			l.queue[0] = nil
			l.queue = l.queue[1:]
			more := len(l.queue) > 0
			l.mu.Unlock()
			if more {
				select {
				case l.ready <- struct{}{}:
				default:
				}
			}
			return c, nil
		}
		l.mu.Unlock()
		select {
		case <-l.ready:
		case <-l.done:
		}
	}
}

// Close stops Accept and closes the connections not yet accepted.
func (l *handoffListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	close(l.done)
	for _, c := range l.queue {
		c.Close()
	}
	l.queue = nil
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }
