package gateway

import (
	"bufio"
	"bytes"
	"io"
	"net"
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

// clock reads the time for the event the loop serves now: each of its
// events (a connection opened, data arrived, a connection closed, the
// tick, a failed dial) starts with it, and what the event does reads
// lp.mono and lp.wall instead of the clock, as nginx reads its clock
// once a turn of its loop: a proxied request's two events read it twice
// where it read it eight times (timeouts, the observation, the log).
func (lp *loopState) clock() {
	lp.wall = time.Now()
	lp.mono = int64(lp.wall.Sub(epoch)) // the monotonic reading: no second read
}

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
	hops     hopSet // stripRequest's and stripResponse's, one message at a time
	// wall and mono are the time of the event being served (clock):
	// mono the monotonic time in nanoseconds since epoch.
	wall time.Time
	mono int64
}

// clientConn is a client connection served on a loop.
type clientConn struct {
	c      gnet.Conn
	lp     *loopState
	remote net.Addr
	ip     []byte // remote's IP, as X-Forwarded-For gives it
	// logRemote is remote as the access log's lines have it, made for
	// the connection's first request when the log is on.
	logRemote []byte
	ex        *exchange // the request in flight
	last      int64     // when the client last sent something
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
	headed  bool      // its final (not 1xx) header has come
	gone    bool
	counted bool // in lp.conns
}

// exchange is a request on its way through a loop.
type exchange struct {
	h      fasthttp.RequestHeader
	fwd    []byte // the X-Forwarded-* lines to add, when the client sent none
	name   []byte // the app as the client wrote it, for the answers
	cc     *clientConn
	app    string
	inst   *eureka.InstanceInfo
	try    balancer.Retry // the router's attempts on the app's instances
	up     *upConn
	sent   int64 // when it went out, or the response last made progress
	asked  int64 // when it went out: ResponseHeaderTimeout counts from then
	end    func()
	resend bool // it may be sent twice: idempotent (the loops carry no body)
	head   bool
	resent bool // sent again after a kept-alive connection broke
	queued bool // in lp.waiting[key]
	key    instKey
	obs    observed // for the traffic counters and the access log
	// refused is the router's 429 or 503 when a rate limit or circuit
	// breaker refused the request, limit its headers' source.
	refused routing.Answer
	limit   routing.Limited
	line    logLine // the access log's line, reused
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
		up.lp.clock()
		up.c = c
		if !up.counted {
			up.counted = true
			up.lp.conns[up.key]++
			up.lp.l.g.loopConns(up.key).Add(1)
		}
		up.lp.opened(up)
		return nil, gnet.None
	}
	if l.stopping.Load() {
		return nil, gnet.Close
	}
	lp := l.state(c.EventLoop())
	lp.clock()
	cc := &clientConn{c: c, lp: lp, remote: c.RemoteAddr(), last: lp.mono}
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
		v.lp.clock()
		v.last = v.lp.mono
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
		v.lp.clock()
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
		lp.clock()
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
		v.lp.clock()
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
