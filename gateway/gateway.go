package gateway

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

const (
	// bufferSize is the read and write buffer of each connection, client
	// or upstream. It bounds a request's or a response's header.
	bufferSize = 8 << 10
	// prefetchSize is how much of a request body fasthttp reads before
	// the handler runs. A body that fits is held in memory, so a request
	// carrying it can be retried; a larger one streams.
	prefetchSize = routing.MaxReplayBody
)

// errBodyTooLarge is a request body over MaxRequestBodySize, found while
// streaming it.
var errBodyTooLarge = errors.New("gateway: request body too large")

// Gateway routes requests by application name to the instances of the
// application. Its Handler serves them; Close releases what it holds.
type Gateway struct {
	cfg           Config
	router        *routing.Router // decides where each request goes
	bal           *balancer.Balancer
	countInFlight bool
	traffic       *traffic.Recorder // nil: none recorded
	conns         sync.Map          // instKey -> *atomic.Int64: the loops' connections
	log           *accessLog        // nil: none written
	dialer        dialer
	pools         pools
	hijacked      hijacks // tunnels and lingering closes

	stop      chan struct{}
	swept     chan struct{} // closed when the sweeper has stopped
	sweeperOn atomic.Bool   // the sweeper started
	closeOnce sync.Once
}

// New returns a Gateway over cfg.Routing.Instances. It starts nothing but
// the access log's writer, with Config.AccessLog: the goroutine that
// closes the connection pools of instances that leave the registry, and
// drops their traffic counters, starts with the first pool or the first
// request counted. Close stops them.
func New(cfg Config) (*Gateway, error) {
	events := &BreakerEvents{} // breaker.go
	cfg.Routing = events.Hook(cfg.Routing)
	cfg, router, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg:    cfg,
		router: router,
		bal:    cfg.Routing.Balancer,
		stop:   make(chan struct{}),
		swept:  make(chan struct{}),
	}
	if !cfg.DisableTraffic {
		if g.traffic = cfg.Traffic; g.traffic == nil {
			g.traffic = traffic.New()
		}
		if g.traffic.Connections == nil {
			g.traffic.Connections = g.connections
		}
	}
	if cfg.AccessLog != nil {
		g.log = newAccessLog(cfg.AccessLog, cfg.AccessLogBuffer, cfg.Logger)
	}
	events.Log, events.Traffic = cfg.Logger, g.traffic
	_, g.countInFlight = cfg.Routing.Policy.(*balancer.LeastRequests)
	g.dialer.net.Timeout = cfg.Routing.DialTimeout
	g.dialer.timeout = cfg.Routing.ReadTimeout
	g.dialer.tls = cfg.TLS
	return g, nil
}

// Router returns the gateway's router: its traffic rules
// (Router.SetRules puts new ones in force for the next request), its
// request counts.
func (g *Gateway) Router() *routing.Router { return g.router }

// Traffic returns the gateway's traffic counters, nil with
// Config.DisableTraffic.
func (g *Gateway) Traffic() *traffic.Recorder { return g.traffic }

// AccessLogDropped returns how many access log lines were dropped, since
// the gateway started: lines that found Config.AccessLogBuffer bytes
// waiting for the writer, lines whose Write failed, and lines of requests
// answered after Close. 0 without an access log.
func (g *Gateway) AccessLogDropped() uint64 {
	if g.log == nil {
		return 0
	}
	return g.log.dropped.Load()
}

// Close stops the pool sweeper, ends the tunnels (upgraded connections)
// and the lingering closes,
// closes the pooled connections, writes the access log's lines still
// queued (waiting for Config.AccessLog's Write), and waits for the
// goroutines it started. Requests still being served go on with fresh
// connections that are not pooled, and are not logged. Close is for
// after the servers that use the handler have stopped; it may be called
// more than once.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() {
		p := &g.pools
		p.mu.Lock()
		p.closed = true
		sweeping := p.sweeping
		p.mu.Unlock()
		if sweeping {
			close(g.stop)
			<-g.swept
		}
		g.hijacked.closeAll()
		g.closePools()
		if g.log != nil {
			g.log.close()
		}
	})
	return nil
}

// Handler serves a request: /<app>/<rest> is proxied to /<rest> on an UP
// instance of <app>; a request that names no application goes to
// Config.Other. Where it goes is the router's decision (package
// routing); the handler carries the bytes.
func (g *Gateway) Handler(ctx *fasthttp.RequestCtx) {
	var o observed
	g.begin(&o, &ctx.Request.Header, ctx.RemoteAddr(), nil)
	defer o.served(ctx)
	var rest *bodyRead // the client's body, counted; nil for none
	if ctx.Request.IsBodyStream() {
		rest = countBody(&ctx.Request)
		// Before served: it may close the connection.
		defer g.settleBody(ctx, rest, ctx.Request.Header.ConnectionClose())
	}
	if status, reason := checkRequest(&ctx.Request.Header); status != 0 {
		plain(ctx, status, reason+"\n")
		ctx.SetConnectionClose()
		return
	}
	uri := ctx.Request.Header.RequestURI()
	if len(uri) > 0 && uri[0] != '/' {
		uri = originForm(ctx) // absolute form: http://host/app/rest
	}
	var buf [512]byte
	rr := g.ruleRequest(&ctx.Request.Header, ctx.RemoteAddr())
	rt, name, path := g.router.Route(buf[:0], uri, &rr)
	if rt.Other {
		g.other(ctx)
		return
	}
	g.router.Limit(&rt, &rr)
	g.observe(&o, &rt)
	if rt.Answer.Status != 0 {
		answer(ctx, rt.Answer)
		limitHeaders(&ctx.Response.Header, &rt.Limit)
		return
	}
	// name and path point into the request URI (or buf): copy them
	// before the URI is replaced.
	var nameBuf [64]byte
	var pathBuf [512]byte
	name = append(nameBuf[:0], name...)
	path = append(pathBuf[:0], path...)

	// The header's edits may rebuild it: the target goes in last.
	req := stripRequest(&ctx.Request.Header, new(hopSet))
	g.setForwarded(&ctx.Request.Header, ctx.RemoteAddr(), ctx.IsTLS(), name, req, routeLabel(&rt), rt.Region)
	g.setRequestID(&ctx.Request.Header, req, ctx.RemoteAddr())
	ctx.Request.SetRequestURIBytes(path)
	if req.upgrade {
		g.tunnel(ctx, &rt, name, &o)
		return
	}
	body, ok := g.prepareBody(ctx, rest)
	if body.buf != nil {
		defer bodyPool.Put(body.buf)
	}
	if ok {
		g.forward(ctx, &rt, name, body, &o)
	}
}

// originForm returns the path and query of an absolute-form request URI.
func originForm(ctx *fasthttp.RequestCtx) []byte {
	u := ctx.Request.URI()
	out := append([]byte(nil), u.PathOriginal()...)
	if q := u.QueryString(); len(q) > 0 {
		out = append(append(out, '?'), q...)
	}
	return out
}

// other serves a request that names no application.
func (g *Gateway) other(ctx *fasthttp.RequestCtx) {
	if g.cfg.Other != nil {
		g.cfg.Other(ctx)
		return
	}
	plain(ctx, fasthttp.StatusNotFound, "not found\n")
}

// resetResponse clears a failed attempt's response for the next, which
// keeps the instance's Content-Type as it sends it (none included), as
// the server's NoDefaultContentType has the first.
func resetResponse(resp *fasthttp.Response) {
	resp.Reset()
	resp.Header.SetNoDefaultContentType(true)
}

// answer answers in place of an instance, as the router says.
func answer(ctx *fasthttp.RequestCtx, a routing.Answer) { plain(ctx, a.Status, a.Reason) }

// plain answers with a short plain-text message.
func plain(ctx *fasthttp.RequestCtx, status int, msg string) {
	ctx.Response.Reset()
	setPlain(&ctx.Response.Header, status)
	ctx.SetBodyString(msg)
}

// prepareBody enforces the body limit and makes a small streamed body
// (rest, nil for none) replayable by reading it into a buffer (returned,
// for the caller to put back). A larger body streams through a
// streamedBody (returned). ok is false when the request has been answered.
func (g *Gateway) prepareBody(ctx *fasthttp.RequestCtx, rest *bodyRead) (body requestBody, ok bool) {
	req := &ctx.Request
	n := req.Header.ContentLength()
	limit := g.cfg.MaxRequestBodySize
	if limit > 0 && int64(n) > limit {
		answer(ctx, routing.TooLarge(limit)) // settleBody decides the rest
		return body, false
	}
	if rest == nil {
		// No body, or none chunked (fasthttp streams every chunked
		// one): no trailer to drop.
		body.replayable = true
		return body, true
	}
	if n >= 0 && n <= prefetchSize {
		// fasthttp has read it already: keep it in memory.
		buf := bodyPool.Get().(*bytes.Buffer)
		buf.Reset()
		if _, err := buf.ReadFrom(rest); err != nil {
			bodyPool.Put(buf)
			answer(ctx, routing.Incomplete())
			ctx.SetConnectionClose() // after answer, whose Reset clears it
			return body, false
		}
		dropTrailers(&req.Header)
		req.SetBodyRaw(buf.Bytes())
		body.replayable, body.buf = true, buf
		return body, true
	}
	if limit <= 0 || n >= 0 {
		limit = -1 // nothing to check as it streams
	}
	body.stream = &streamedBody{rest: rest, left: limit, h: &req.Header}
	req.SetBodyStream(body.stream, n)
	return body, true
}

// requestBody is what prepareBody made of a request body.
type requestBody struct {
	replayable bool          // in memory (or none): the request can be sent again
	buf        *bytes.Buffer // holds it, when it had to be read
	stream     *streamedBody // when it streams
}

// bodyPool holds the buffers of small request bodies.
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// streamedBody passes a client's streamed body on, and fails a chunked
// body once it passes the limit.
type streamedBody struct {
	rest *bodyRead
	left int64                   // bytes allowed yet; negative for no limit
	over bool                    // it passed the limit
	h    *fasthttp.RequestHeader // whose trailer fields go when the body ends
}

func (b *streamedBody) Read(p []byte) (int, error) {
	n, err := b.rest.Read(p)
	if err == io.EOF && b.rest.want < 0 {
		dropTrailers(b.h) // fasthttp writes them after the last chunk
	}
	if b.left >= 0 {
		if b.left -= int64(n); b.left < 0 {
			b.over = true
			return 0, errBodyTooLarge
		}
	}
	return n, err
}

// failed reports whether the body could not be passed on whole: the
// client's fault, not the instance's.
func (b *streamedBody) failed() bool { return b.over || b.rest.broke() }

// forward sends the request for the app the client spelled name to the
// route's instances, as the router's Retry picks them and decides, after
// a failure, whether another gets it.
func (g *Gateway) forward(ctx *fasthttp.RequestCtx, rt *routing.Route, name []byte, body requestBody, o *observed) {
	resend := routing.Resendable(ctx.Method(), body.replayable)
	try := g.router.Retry(rt, resend)
	for {
		inst := try.Next()
		o.attempt(inst)
		u := g.upstream(rt.App, inst, rt.Secure)
		if g.cfg.RewriteHost || len(ctx.Request.Header.Host()) == 0 {
			ctx.Request.Header.SetHost(u.addr)
		}
		var end func()
		if g.countInFlight {
			end = try.Begin()
		}
		err := u.roundTrip(&ctx.Request, &ctx.Response, resend, g.cfg.Routing.ResponseHeaderTimeout)
		if end != nil {
			end()
		}
		if err == nil {
			try.Succeeded()
			stripResponse(&ctx.Response.Header, false, new(hopSet))
			return
		}
		resetResponse(&ctx.Response)
		switch {
		case errors.Is(err, errBodyTooLarge):
			// A chunked body past the limit; settleBody decides its rest.
			answer(ctx, routing.TooLarge(g.cfg.MaxRequestBodySize))
			return
		case body.stream != nil && body.stream.failed():
			// The client stopped sending its body.
			answer(ctx, routing.Incomplete())
			ctx.SetConnectionClose() // after answer, whose Reset clears it
			return
		case errors.Is(err, fasthttp.ErrNoFreeConns):
			answer(ctx, routing.Busy(name))
			return
		}
		f := failureOf(err)
		g.logFailure(rt.App, inst, u.addr, try.Attempt(), err)
		again := try.Failed(f)
		o.Failed(f, again)
		if !again {
			answer(ctx, routing.Failed(name, f))
			return
		}
	}
}
