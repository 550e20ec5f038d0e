package gateway

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
)

// loops is the event-loop front of a Server, on gnet: its loops accept
// the client connections and serve the requests a gateway sees most
// without a goroutine per connection, reading a socket only when epoll
// says it has data, as nginx does. Such a request has no body and no
// Upgrade, names a registered application, and its instance answers
// with a body of known length up to 64 KiB (or none). Any other request
// hands its connection, with what was read of it, to fasthttp for good
// (through the handoff listener); a longer or chunked response streams
// from a goroutine, and the connection goes on in fasthttp after it.
//
// Each loop keeps its own state (loopState) and its own keep-alive
// connections to the instances, so a request never leaves its loop.
type loops struct {
	gnet.BuiltinEventEngine
	g       *Gateway
	cfg     ServerConfig
	handoff *handoffListener
	n       int

	cli      *gnet.Client // the loops (a gnet engine without a listener)
	ln       net.Listener
	addr     net.Addr
	accepted chan struct{} // closed when the accepting goroutine has stopped

	states   sync.Map     // gnet.EventLoop -> *loopState
	clients  atomic.Int64 // client connections on the loops
	stopping atomic.Bool
	closing  atomic.Bool    // the loops are being stopped: no retries
	work     sync.WaitGroup // dials and streamed responses
	tickStop chan struct{}
	ticked   chan struct{} // closed when the ticker has stopped
	interval time.Duration
}

// headerLen returns the length of the header at the start of buf, through
// the empty line that ends it, or -1 if it has not all come. Lines may end
// in CRLF or, as fasthttp accepts, a bare LF.
func headerLen(buf []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		switch {
		case i < len(buf) && buf[i] == '\n':
			return i + 1
		case i+1 < len(buf) && buf[i] == '\r' && buf[i+1] == '\n':
			return i + 2
		}
	}
}

var crlf2 = []byte("\r\n\r\n")

// maxUnread bounds what a loop queues for a client that does not read;
// maxInbound, what it holds of what a client sent ahead.
const (
	maxUnread  = 256 << 10
	maxInbound = 1 << 20
)

// now is the monotonic time in nanoseconds since epoch.
func now() int64 { return int64(time.Since(epoch)) }

// loopState is one event loop's: touched only on that loop.
type loopState struct {
	l        *loops
	el       gnet.EventLoop
	clients  map[*clientConn]struct{}
	idle     map[instKey][]*upConn
	conns    map[instKey]int         // connections to each instance, open or being dialled
	waiting  map[instKey][]*exchange // requests waiting for a connection (maxConns)
	maxConns int                     // per instance: this loop's share of MaxConnsPerInstance
	free     []*exchange
	respH    fasthttp.ResponseHeader
	head     []byte // a request header ended anew with CRLF CRLF
	rd       bytes.Reader
	br       *bufio.Reader
	out      []byte
}

// clientConn is a client connection served on a loop.
type clientConn struct {
	c      gnet.Conn
	lp     *loopState
	remote net.Addr
	ip     []byte    // remote's IP, as X-Forwarded-For gives it
	ex     *exchange // the request in flight
	last   int64     // when the client last sent something
	// headerStart is when the part of a request header that has come
	// was first seen; 0 when none is waiting.
	headerStart int64
	prefix      []byte // what handoff gives fasthttp before the bytes left to read
	closing     bool   // close once the response in flight is written
	handoff     bool   // hand to fasthttp once the responses written are flushed
	drain       bool   // close once the responses written are flushed
	pending     int    // what was queued for it at the last tick
	stalled     int64  // since when nothing queued for it was taken; 0 when nothing is queued
	gone        bool   // closed, or handed to fasthttp
}

// upConn is a connection to an instance, kept by one loop.
type upConn struct {
	c       gnet.Conn // nil while it is being dialled
	lp      *loopState
	key     instKey
	addr    string
	ex      *exchange // the request it carries
	since   int64     // idle since
	reused  bool      // it carried a request before this one
	got     bool      // the current response has begun to arrive
	gone    bool
	counted bool // in lp.conns
}

// exchange is a request on its way through a loop.
type exchange struct {
	h          fasthttp.RequestHeader
	fwd        []byte // the X-Forwarded-* lines to add, when the client sent none
	list       []*eureka.InstanceInfo
	cc         *clientConn
	app        string
	inst       *eureka.InstanceInfo
	tried      [8]*eureka.InstanceInfo
	attempt    int
	up         *upConn
	sent       int64 // when it went out, or the response last made progress
	end        func()
	idempotent bool
	head       bool
	resent     bool // sent again after a kept-alive connection broke
	queued     bool // in lp.waiting[key]
	key        instKey
}

func (l *loops) state(el gnet.EventLoop) *loopState {
	if s, ok := l.states.Load(el); ok {
		return s.(*loopState)
	}
	lp := &loopState{l: l, el: el, clients: map[*clientConn]struct{}{}, idle: map[instKey][]*upConn{},
		conns: map[instKey]int{}, waiting: map[instKey][]*exchange{},
		maxConns: max(1, l.g.cfg.MaxConnsPerInstance/max(1, l.n))}
	lp.br = bufio.NewReaderSize(&lp.rd, bufferSize)
	s, _ := l.states.LoadOrStore(el, lp)
	return s.(*loopState)
}

// OnOpen takes a client connection, or sends the request that waited
// for a connection to an instance.
func (l *loops) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	if up, ok := c.Context().(*upConn); ok {
		up.c = c
		if !up.counted {
			up.counted = true
			up.lp.conns[up.key]++
		}
		up.lp.opened(up)
		return nil, gnet.None
	}
	if l.stopping.Load() {
		return nil, gnet.Close
	}
	lp := l.state(c.EventLoop())
	cc := &clientConn{c: c, lp: lp, remote: c.RemoteAddr(), last: now()}
	cc.ip = appendClientIP(nil, cc.remote)
	c.SetContext(cc)
	lp.clients[cc] = struct{}{}
	l.clients.Add(1)
	return nil, gnet.None
}

// OnTraffic serves what arrived: a request from a client, or a response
// from an instance.
func (l *loops) OnTraffic(c gnet.Conn) gnet.Action {
	switch v := c.Context().(type) {
	case *clientConn:
		v.last = now()
		if a := v.lp.serve(v); a != gnet.None {
			return a
		}
		// gnet reads all a client sends: one that sends far ahead of
		// its answers is cut off rather than buffered without end.
		if v.c.InboundBuffered() > maxInbound {
			return gnet.Close
		}
		return gnet.None
	case *upConn:
		return v.lp.answer(v)
	}
	return gnet.Close
}

// OnClose forgets a connection, and fails the request it carried.
func (l *loops) OnClose(c gnet.Conn, err error) gnet.Action {
	switch v := c.Context().(type) {
	case *clientConn:
		if v.gone {
			return gnet.None
		}
		lp := v.lp
		lp.forget(v)
		if ex := v.ex; ex != nil {
			v.ex = nil
			if up := ex.up; up != nil {
				up.ex = nil
				if up.c != nil && !up.gone {
					up.gone = true
					lp.el.Close(up.c) // mid-response: not reusable
				}
			}
			lp.recycle(ex)
		}
	case *upConn:
		v.lp.uncount(v)
		if v.gone && v.ex == nil {
			return gnet.None
		}
		v.gone = true
		lp := v.lp
		lp.dropIdle(v)
		if ex := v.ex; ex != nil {
			v.ex = nil
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			lp.failed(ex, err, v.reused && !v.got)
		}
	}
	return gnet.None
}

// serve reads the client's requests, one at a time, and starts each.
func (lp *loopState) serve(cc *clientConn) gnet.Action {
	// A client that sends requests without reading the responses waits
	// (the tick goes on) once maxUnread of them are queued for it.
	for cc.ex == nil && !cc.gone && !cc.handoff && !cc.drain && cc.c.OutboundBuffered() < maxUnread {
		buf, _ := cc.c.Peek(-1)
		if len(buf) == 0 {
			return gnet.None
		}
		n := headerLen(buf)
		if n < 0 {
			if cc.headerStart == 0 {
				cc.headerStart = now() // the tick cuts it at HeaderTimeout
			}
			if len(buf) >= bufferSize {
				return lp.handoff(cc) // fasthttp answers 431
			}
			return gnet.None
		}
		cc.headerStart = 0
		header := buf[:n]
		if !bytes.HasSuffix(header, crlf2) {
			// It ends in a bare LF, which RFC 9112 section 2.2 lets a
			// server read, as nginx does; fasthttp holds out for a CRLF
			// CRLF. Both read the copy ended with one.
			lp.head = append(append(lp.head[:0], bytes.TrimRight(header, "\r\n")...), crlf2...)
			header = lp.head
		}
		ex := lp.exchange()
		if !lp.start(cc, ex, header) {
			lp.recycle(ex)
			if len(header) != n { // the copy, then what came after the header
				cc.c.Discard(n)
				cc.prefix = append([]byte(nil), header...)
				return lp.handoff(cc)
			}
			return lp.handoff(cc)
		}
		cc.c.Discard(n)
		lp.send(ex, ex.list)
	}
	return gnet.None
}

// start parses a request header into ex and, when the request is one the
// loop serves, prepares it for an instance as the fasthttp path does and
// makes it the client's exchange. When it is not, the caller recycles ex.
func (lp *loopState) start(cc *clientConn, ex *exchange, header []byte) bool {
	h := &ex.h
	lp.rd.Reset(header)
	lp.br.Reset(&lp.rd)
	// -2: no Content-Length and not chunked, which for a request means
	// no body (RFC 9112 section 6.3).
	if err := h.Read(lp.br); err != nil || lp.rd.Len()+lp.br.Buffered() != 0 ||
		(h.ContentLength() != 0 && h.ContentLength() != -2) || h.IsConnect() {
		return false
	}
	if status, _ := checkRequest(h); status != 0 {
		return false // fasthttp answers it
	}
	uri := h.RequestURI()
	if len(uri) == 0 || uri[0] != '/' {
		return false
	}
	var clean [512]byte
	uri = routeTarget(clean[:0], uri)
	name, rest, ok := routing.SplitApp(uri)
	if !ok {
		return false
	}
	g := lp.l.g
	app, cached := g.names.upper(name)
	list := g.cfg.Instances.Instances(app)
	if len(list) == 0 {
		return false // fasthttp answers 503 with the reason
	}
	if !cached {
		g.names.remember(name, app)
	}
	closing := h.ConnectionClose() // stripRequest forgets it
	req := stripRequest(h)
	if req.upgrade || req.expect {
		// fasthttp answers Expect: 100-continue, and tunnels upgrades.
		return false
	}
	if has := req.has; has == 0 {
		// What setForwarded would add, written straight after the
		// header: the common case, without four header edits.
		f := append(ex.fwd[:0], "X-Forwarded-For: "...)
		f = append(append(f, cc.ip...), "\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: "...)
		f = append(append(f, h.Host()...), "\r\nX-Forwarded-Prefix: /"...)
		ex.fwd = append(append(f, name...), "\r\n"...)
	} else {
		g.setForwarded(h, cc.remote, false, name, req)
	}
	var buf [512]byte
	target := buf[:0]
	if len(rest) == 0 || rest[0] != '/' {
		target = append(target, '/')
	}
	target = append(target, rest...)
	h.SetRequestURIBytes(target)

	ex.cc, ex.app, ex.list = cc, app, list
	ex.idempotent, ex.head = isIdempotent(h), h.IsHead()
	cc.ex = ex
	cc.closing = cc.closing || closing
	return true
}

// send sends the exchange's request to an instance not tried yet: on a
// kept-alive connection of this loop, or on a new one.
func (lp *loopState) send(ex *exchange, list []*eureka.InstanceInfo) {
	g := lp.l.g
	if list == nil {
		list = g.cfg.Instances.Instances(ex.app)
		if len(list) == 0 {
			lp.reply(ex, fasthttp.StatusServiceUnavailable, fmt.Sprintf("application %q has no UP instance\n", ex.app))
			return
		}
	}
	inst := g.pick(ex.app, list, ex.tried[:min(ex.attempt, len(ex.tried))])
	if ex.attempt < len(ex.tried) {
		ex.tried[ex.attempt] = inst
	}
	ex.inst = inst
	if g.countInFlight {
		ex.end = g.bal.Begin(inst)
	}
	lp.sendTo(ex, keyOf(ex.app, inst))
}

// sendTo sends the request on a connection to the instance at key.
func (lp *loopState) sendTo(ex *exchange, key instKey) {
	if up := lp.takeIdle(key); up != nil {
		lp.write(up, ex)
		return
	}
	if lp.conns[key] >= lp.maxConns {
		// Wait for one to come free (putIdle) or close (uncount), as
		// fasthttp's pool waits; the tick answers 503 after DialTimeout.
		ex.up, ex.queued, ex.key, ex.sent = nil, true, key, now()
		lp.waiting[key] = append(lp.waiting[key], ex)
		return
	}
	up := &upConn{lp: lp, key: key, addr: balancer.Address(ex.inst, false), ex: ex, counted: true}
	lp.conns[key]++
	ex.up = up
	ex.sent = now()
	lp.setHost(ex, up)
	lp.dial(up)
}

func (lp *loopState) setHost(ex *exchange, up *upConn) {
	if lp.l.g.cfg.RewriteHost || len(ex.h.Host()) == 0 {
		ex.h.SetHost(up.addr)
	}
}

// write sends the request on up.
func (lp *loopState) write(up *upConn, ex *exchange) {
	up.ex, ex.up = ex, up
	up.got = false
	ex.sent = now()
	lp.setHost(ex, up)
	lp.out = ex.h.AppendBytes(lp.out[:0])
	if len(ex.fwd) > 0 { // before the blank line that ends the header
		lp.out = append(append(lp.out[:len(lp.out)-2], ex.fwd...), "\r\n"...)
	}
	up.c.Write(lp.out) // a failure closes up: OnClose fails the request
}

// dial connects to the instance from a goroutine and enrolls the
// connection on this loop, where OnOpen sends the request.
func (lp *loopState) dial(up *upConn) {
	l := lp.l
	l.work.Add(1)
	go func() {
		defer l.work.Done()
		nc, err := l.g.dialer.net.Dial("tcp", up.addr)
		if err != nil {
			err = &dialError{err}
		} else {
			var ch <-chan gnet.RegisteredResult
			if ch, err = lp.el.Enroll(gnet.NewContext(context.Background(), up), nc); err != nil {
				nc.Close()
			} else {
				select {
				case r := <-ch:
					err = r.Err
				case <-time.After(l.g.cfg.DialTimeout):
					// The loop did not take it (stopping): the tick
					// fails the request.
					return
				}
			}
		}
		if err != nil {
			lp.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
				lp.dialFailed(up, err)
				return nil
			}))
		}
	}()
}

// opened sends the request a new connection was dialled for, or keeps
// the connection for the next when its client has gone.
func (lp *loopState) opened(up *upConn) {
	ex := up.ex
	if ex == nil || ex.cc.gone || ex.cc.ex != ex {
		up.ex = nil
		lp.putIdle(up)
		return
	}
	lp.write(up, ex)
}

func (lp *loopState) dialFailed(up *upConn, err error) {
	lp.uncount(up)
	ex := up.ex
	up.ex, up.gone = nil, true
	if ex != nil && ex.up == up {
		lp.failed(ex, err, false)
	}
}

// answer reads an instance's response and, once it has all of it, writes
// it to the client.
func (lp *loopState) answer(up *upConn) gnet.Action {
	ex := up.ex
	if ex == nil {
		up.gone = true
		return gnet.Close // an idle connection does not speak
	}
	up.got = true
	ex.sent = now()
	for {
		buf, _ := up.c.Peek(-1)
		hl := headerLen(buf)
		if hl < 0 {
			if len(buf) >= bufferSize {
				return lp.broken(up, ex, errors.New("gateway: response header too large"))
			}
			return gnet.None
		}
		h := &lp.respH
		h.SetNoDefaultContentType(true) // as the instance sent it
		lp.rd.Reset(buf[:hl])
		lp.br.Reset(&lp.rd)
		if err := h.Read(lp.br); err != nil {
			return lp.broken(up, ex, err)
		}
		if lp.rd.Len()+lp.br.Buffered() != 0 {
			return lp.broken(up, ex, errors.New("gateway: malformed response header"))
		}
		status := h.StatusCode()
		if status >= 100 && status < 200 && status != fasthttp.StatusSwitchingProtocols {
			up.c.Discard(hl) // informational: the response follows
			continue
		}
		if status == fasthttp.StatusSwitchingProtocols {
			return lp.broken(up, ex, errors.New("gateway: 101 to a request without Upgrade"))
		}
		n := h.ContentLength()
		if ex.head || status == fasthttp.StatusNoContent || status == fasthttp.StatusNotModified {
			n = 0
		} else if n < 0 || n > smallBody {
			return lp.stream(up, ex)
		}
		if len(buf) < hl+n {
			return gnet.None // the rest of the body is on its way
		}
		return lp.respond(up, ex, h, buf[hl:hl+n], hl+n)
	}
}

// respond writes a whole response to the client, and hands the instance's
// connection back to the pool (or closes it when the instance said so).
func (lp *loopState) respond(up *upConn, ex *exchange, h *fasthttp.ResponseHeader, body []byte, size int) gnet.Action {
	upClose := h.ConnectionClose()
	stripResponse(h, false) // adds a Date when the instance sent none
	cc := ex.cc
	if cc.closing || lp.l.stopping.Load() {
		cc.closing = true
		h.SetConnectionClose()
	}
	lp.out = appendResponse(lp.out[:0], h)
	if !cc.closing && !ex.h.IsHTTP11() {
		// An HTTP/1.0 client that asked to keep the connection is told
		// it is kept, as fasthttp tells it.
		lp.out = append(lp.out[:len(lp.out)-2], "Connection: keep-alive\r\n\r\n"...)
	}
	lp.out = append(lp.out, body...)
	up.c.Discard(size)
	lp.l.g.bal.ReportSuccess(ex.inst)
	up.ex, ex.up = nil, nil
	lp.finish(ex)
	cc.c.Write(lp.out) // before putIdle, which may send a waiting request (lp.out)
	action := gnet.None
	if upClose || up.c.InboundBuffered() > 0 { // said so, or sent more than its length
		up.gone = true
		action = gnet.Close
	} else {
		up.reused = true
		lp.putIdle(up)
	}
	lp.next(cc)
	return action
}

// appendResponse appends h's status line and fields as they are, the
// instance's Date among them: fasthttp's own writer would put its clock's
// in its place.
func appendResponse(dst []byte, h *fasthttp.ResponseHeader) []byte {
	status := h.StatusCode()
	dst = append(dst, "HTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, ' ')
	if m := h.StatusMessage(); len(m) > 0 {
		dst = append(dst, m...)
	} else {
		dst = append(dst, fasthttp.StatusMessage(status)...)
	}
	dst = append(dst, "\r\n"...)
	for k, v := range h.All() {
		dst = append(append(append(append(dst, k...), ": "...), v...), "\r\n"...)
	}
	return append(dst, "\r\n"...)
}

// next closes the client's connection after a response when it asked,
// or goes on with a request it sent meanwhile.
func (lp *loopState) next(cc *clientConn) {
	if cc.gone {
		return
	}
	if cc.closing {
		if cc.c.OutboundBuffered() > 0 {
			cc.drain = true // the tick closes it once flushed
			return
		}
		lp.close(cc)
		return
	}
	if cc.c.InboundBuffered() > 0 {
		lp.serveLater(cc)
	}
}

// serveLater serves what a client sent while its previous request was in
// flight, outside the client's own events: when serve hands the
// connection over (or gives up on it), the loop's copy is closed here.
func (lp *loopState) serveLater(cc *clientConn) {
	if lp.serve(cc) == gnet.Close {
		lp.el.Close(cc.c)
	}
}

// broken closes an instance's connection whose response cannot be used,
// and fails the request.
func (lp *loopState) broken(up *upConn, ex *exchange, err error) gnet.Action {
	up.ex, up.gone = nil, true
	lp.failed(ex, err, false)
	return gnet.Close
}

// failed handles a request whose instance failed it: the request goes
// again on a fresh connection when a kept-alive one turned out closed, to
// another instance as the fasthttp path would retry it, or the client
// gets 502 (504 after a timeout).
func (lp *loopState) failed(ex *exchange, err error, stale bool) {
	ex.up = nil
	if ex.end != nil {
		ex.end()
		ex.end = nil
	}
	cc := ex.cc
	if cc == nil || cc.gone || cc.ex != ex {
		lp.recycle(ex)
		return
	}
	g := lp.l.g
	closing := lp.l.closing.Load()
	if stale && !ex.resent && ex.idempotent && !timedOut(err) && !closing {
		ex.resent = true
		if g.countInFlight {
			ex.end = g.bal.Begin(ex.inst)
		}
		lp.sendTo(ex, keyOf(ex.app, ex.inst))
		return
	}
	g.noteFailure(ex.app, ex.inst, balancer.Address(ex.inst, false), ex.attempt, err)
	// The loops carry no request body: an idempotent request is replayable.
	if g.mayRetry(err, ex.idempotent, ex.attempt) && !closing {
		if list := g.cfg.Instances.Instances(ex.app); len(list) > 0 {
			ex.attempt++
			ex.resent = false
			lp.send(ex, list)
			return
		}
	}
	status, reason := failedAnswer(ex.app, err)
	lp.reply(ex, status, reason)
}

// reply answers the exchange's client with a short plain-text message, as
// plain does on the fasthttp path.
func (lp *loopState) reply(ex *exchange, status int, msg string) {
	cc := ex.cc
	if lp.l.stopping.Load() {
		cc.closing = true
	}
	lp.out = appendPlain(lp.out[:0], status, len(msg), cc.closing)
	if !ex.head {
		lp.out = append(lp.out, msg...)
	}
	lp.finish(ex)
	cc.c.Write(lp.out)
	lp.next(cc)
}

// appendPlain appends the header of a short plain-text answer of n bytes
// with status, saying Connection: close when closing.
func appendPlain(dst []byte, status, n int, closing bool) []byte {
	var h fasthttp.ResponseHeader
	setPlain(&h, status)
	h.SetContentLength(n)
	if closing {
		h.SetConnectionClose()
	}
	return h.AppendBytes(dst)
}

// finish ends the client's exchange.
func (lp *loopState) finish(ex *exchange) {
	if ex.end != nil {
		ex.end()
		ex.end = nil
	}
	ex.cc.ex = nil
	lp.recycle(ex)
}

func (lp *loopState) exchange() *exchange {
	if n := len(lp.free); n > 0 {
		ex := lp.free[n-1]
		lp.free = lp.free[:n-1]
		return ex
	}
	return new(exchange)
}

func (lp *loopState) recycle(ex *exchange) {
	if ex.end != nil {
		ex.end()
	}
	ex.h.Reset()
	ex.fwd, ex.list = ex.fwd[:0], nil
	ex.cc, ex.app, ex.inst, ex.up, ex.end = nil, "", nil, nil, nil
	ex.tried, ex.attempt, ex.sent = [8]*eureka.InstanceInfo{}, 0, 0
	ex.idempotent, ex.head, ex.resent, ex.queued, ex.key = false, false, false, false, instKey{}
	if len(lp.free) < 1024 {
		lp.free = append(lp.free, ex)
	}
}

// takeIdle returns the most recently used idle connection to key.
func (lp *loopState) takeIdle(key instKey) *upConn {
	list := lp.idle[key]
	for n := len(list); n > 0; n = len(list) {
		up := list[n-1]
		list[n-1] = nil
		list = list[:n-1]
		lp.idle[key] = list
		if !up.gone {
			return up
		}
	}
	return nil
}

func (lp *loopState) putIdle(up *upConn) {
	if up.gone {
		return
	}
	if lp.l.stopping.Load() {
		up.gone = true
		lp.el.Close(up.c)
		return
	}
	if ex := lp.dequeue(up.key); ex != nil {
		lp.write(up, ex)
		return
	}
	up.since = now()
	lp.idle[up.key] = append(lp.idle[up.key], up)
}

// dequeue returns the first request still waiting for a connection to
// key, if any.
func (lp *loopState) dequeue(key instKey) *exchange {
	list := lp.waiting[key]
	for len(list) > 0 {
		ex := list[0]
		list[0] = nil
		list = list[1:]
		if ex.waitsFor(key) {
			ex.queued = false
			lp.waiting[key] = list
			return ex
		}
	}
	delete(lp.waiting, key)
	return nil
}

// waitsFor reports whether ex is a live request queued for a connection
// to key: list entries outlive an answer or a client's departure.
func (ex *exchange) waitsFor(key instKey) bool {
	return ex.queued && ex.key == key && ex.cc != nil && !ex.cc.gone && ex.cc.ex == ex
}

// uncount forgets a connection that closed (or never opened) and lets a
// request waiting for one dial its own.
func (lp *loopState) uncount(up *upConn) {
	if !up.counted {
		return
	}
	up.counted = false
	lp.conns[up.key]--
	if lp.conns[up.key] <= 0 {
		delete(lp.conns, up.key)
	}
	if ex := lp.dequeue(up.key); ex != nil {
		lp.sendTo(ex, up.key)
	}
}

func (lp *loopState) dropIdle(up *upConn) {
	list := lp.idle[up.key]
	for i, u := range list {
		if u == up {
			lp.idle[up.key] = append(list[:i], list[i+1:]...)
			return
		}
	}
}

// close closes a client's connection from outside its own events.
func (lp *loopState) close(cc *clientConn) {
	if !cc.gone {
		lp.el.Close(cc.c) // OnClose forgets it
	}
}

func (lp *loopState) forget(cc *clientConn) {
	cc.gone = true
	delete(lp.clients, cc)
	lp.l.clients.Add(-1)
}
