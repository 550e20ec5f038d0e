package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
)

const (
	// bufferSize is the read and write buffer of each connection, client
	// or upstream. It bounds a request's or a response's header.
	bufferSize = 8 << 10
	// prefetchSize is how much of a request body fasthttp reads before
	// the handler runs. A body that fits is held in memory, so a request
	// carrying it can be retried; a larger one streams.
	prefetchSize = 64 << 10
)

// errBodyTooLarge is a request body over MaxRequestBodySize, found while
// streaming it.
var errBodyTooLarge = errors.New("gateway: request body too large")

// Gateway routes requests by application name to the instances of the
// application. Its Handler serves them; Close releases what it holds.
type Gateway struct {
	cfg           Config
	bal           *balancer.Balancer
	countInFlight bool
	dialer        dialer
	pools         pools
	names         nameCache
	tunnels       tunnels

	stop      chan struct{}
	swept     chan struct{} // closed when the sweeper has stopped
	closeOnce sync.Once
}

// New returns a Gateway over cfg.Instances. It starts nothing: the
// goroutine that closes the connection pools of instances that leave the
// registry starts with the first pool, and Close stops it.
func New(cfg Config) (*Gateway, error) {
	if cfg.Instances == nil {
		return nil, errors.New("gateway: Config.Instances is required")
	}
	cfg = cfg.withDefaults()
	g := &Gateway{
		cfg:   cfg,
		bal:   cfg.Balancer,
		stop:  make(chan struct{}),
		swept: make(chan struct{}),
	}
	_, g.countInFlight = cfg.Policy.(*balancer.LeastRequests)
	g.dialer.net.Timeout = cfg.DialTimeout
	g.dialer.timeout = cfg.ResponseTimeout
	return g, nil
}

// Close stops the pool sweeper, ends the tunnels (upgraded connections),
// closes the pooled connections, and waits for the goroutines it started.
// Requests still being served go on with fresh connections that are not
// pooled. Close is for after the servers that use the handler have
// stopped; it may be called more than once.
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
		g.tunnels.closeAll()
		g.closePools()
	})
	return nil
}

// Handler serves a request: /<app>/<rest> is proxied to /<rest> on an UP
// instance of <app>; a request that names no application goes to
// Config.Other.
func (g *Gateway) Handler(ctx *fasthttp.RequestCtx) {
	if status, reason := checkRequest(&ctx.Request.Header); status != 0 {
		plain(ctx, status, reason+"\n")
		ctx.SetConnectionClose()
		return
	}
	uri := ctx.Request.Header.RequestURI()
	if len(uri) > 0 && uri[0] != '/' {
		uri = originForm(ctx) // absolute form: http://host/app/rest
	}
	var clean [512]byte
	uri = routeTarget(clean[:0], uri)
	name, rest, ok := routing.SplitApp(uri)
	if !ok {
		g.other(ctx)
		return
	}
	app, cached := g.names.upper(name)
	list := g.cfg.Instances.Instances(app)
	if len(list) == 0 {
		g.unavailable(ctx, name, app)
		return
	}
	if !cached {
		g.names.remember(name, app)
	}

	req := stripRequest(&ctx.Request.Header)
	g.setForwarded(&ctx.Request.Header, ctx.RemoteAddr(), ctx.IsTLS(), name, req)
	// name and rest point into the request URI: done with name, copy
	// rest before replacing it.
	var buf [512]byte
	target := buf[:0]
	if len(rest) == 0 || rest[0] != '/' {
		target = append(target, '/')
	}
	target = append(target, rest...)
	ctx.Request.SetRequestURIBytes(target)

	if req.upgrade {
		g.tunnel(ctx, app, list)
		return
	}
	body, ok := g.prepareBody(ctx)
	if body.buf != nil {
		defer bodyPool.Put(body.buf)
	}
	if ok {
		g.forward(ctx, app, list, body)
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

// unavailable answers 503 for an app with no UP instance, saying whether
// it is registered at all.
func (g *Gateway) unavailable(ctx *fasthttp.RequestCtx, name []byte, app string) {
	reason := fmt.Sprintf("no application %q is registered\n", name)
	if all, ok := g.cfg.Instances.(interface {
		AllInstances(string) []*eureka.InstanceInfo
	}); ok && len(all.AllInstances(app)) > 0 {
		reason = fmt.Sprintf("application %q has no UP instance\n", name)
	}
	plain(ctx, fasthttp.StatusServiceUnavailable, reason)
}

// plain answers with a short plain-text message.
func plain(ctx *fasthttp.RequestCtx, status int, msg string) {
	ctx.Response.Reset()
	setPlain(&ctx.Response.Header, status)
	ctx.SetBodyString(msg)
}

// prepareBody enforces the body limit and makes a small streamed body
// replayable by reading it into a buffer (returned, for the caller to put
// back). A larger body streams through a streamedBody (returned). ok is
// false when the request has been answered.
func (g *Gateway) prepareBody(ctx *fasthttp.RequestCtx) (body requestBody, ok bool) {
	req := &ctx.Request
	n := req.Header.ContentLength()
	limit := g.cfg.MaxRequestBodySize
	if limit > 0 && int64(n) > limit {
		plain(ctx, fasthttp.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes\n", limit))
		ctx.SetConnectionClose()
		return body, false
	}
	if !req.IsBodyStream() {
		// No body, or none chunked (fasthttp streams every chunked
		// one): no trailer to drop.
		body.replayable = true
		return body, true
	}
	if n >= 0 && n <= prefetchSize {
		// fasthttp has read it already: keep it in memory.
		buf := bodyPool.Get().(*bytes.Buffer)
		buf.Reset()
		if _, err := buf.ReadFrom(req.BodyStream()); err != nil {
			bodyPool.Put(buf)
			ctx.SetConnectionClose()
			plain(ctx, fasthttp.StatusBadRequest, "incomplete request body\n")
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
	body.stream = &streamedBody{r: req.BodyStream(), left: limit, want: n, h: &req.Header}
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

// streamedBody passes a client's streamed body on, notes a failure to read
// it (the client's fault, not the instance's), and fails a chunked body
// once it passes the limit.
type streamedBody struct {
	r    io.Reader
	left int64 // bytes allowed yet; negative for no limit
	want int   // Content-Length, or -1
	read int
	err  error                   // the client's read error, or io.ErrUnexpectedEOF for a short body
	h    *fasthttp.RequestHeader // whose trailer fields go when the body ends
}

func (b *streamedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += n
	switch {
	case err == io.EOF && b.want < 0:
		dropTrailers(b.h) // fasthttp writes them after the last chunk
	case err == io.EOF && b.want >= 0 && b.read < b.want:
		b.err = io.ErrUnexpectedEOF
	case err != nil && err != io.EOF:
		b.err = err
	}
	if b.left >= 0 {
		if b.left -= int64(n); b.left < 0 {
			b.err = errBodyTooLarge
			return 0, errBodyTooLarge
		}
	}
	return n, err
}

// forward sends the request to an instance of app, and to others after a
// failure the request may be retried after.
func (g *Gateway) forward(ctx *fasthttp.RequestCtx, app string, list []*eureka.InstanceInfo, body requestBody) {
	var tried [8]*eureka.InstanceInfo
	idempotent := isIdempotent(&ctx.Request.Header)
	for attempt := 0; ; attempt++ {
		inst := g.pick(app, list, tried[:min(attempt, len(tried))])
		if attempt < len(tried) {
			tried[attempt] = inst
		}
		u := g.upstream(app, inst)
		if g.cfg.RewriteHost || len(ctx.Request.Header.Host()) == 0 {
			ctx.Request.Header.SetHost(u.addr)
		}
		var end func()
		if g.countInFlight {
			end = g.bal.Begin(inst)
		}
		err := u.roundTrip(&ctx.Request, &ctx.Response, body.replayable)
		if end != nil {
			end()
		}
		if err == nil {
			g.bal.ReportSuccess(inst)
			stripResponse(&ctx.Response.Header, false)
			return
		}
		ctx.Response.Reset()
		switch {
		case errors.Is(err, errBodyTooLarge):
			ctx.SetConnectionClose()
			plain(ctx, fasthttp.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes\n", g.cfg.MaxRequestBodySize))
			return
		case body.stream != nil && body.stream.err != nil:
			// The client stopped sending its body.
			ctx.SetConnectionClose()
			plain(ctx, fasthttp.StatusBadRequest, "incomplete request body\n")
			return
		case errors.Is(err, fasthttp.ErrNoFreeConns):
			plain(ctx, fasthttp.StatusServiceUnavailable, busyReason(app))
			return
		}
		g.noteFailure(app, inst, u.addr, attempt, err)
		if g.mayRetry(err, body.replayable && idempotent, attempt) {
			if list = g.cfg.Instances.Instances(app); len(list) > 0 {
				continue
			}
		}
		status, reason := failedAnswer(app, err)
		plain(ctx, status, reason)
		return
	}
}

// pick returns an instance of app not tried yet, or any if all were.
func (g *Gateway) pick(app string, list []*eureka.InstanceInfo, tried []*eureka.InstanceInfo) *eureka.InstanceInfo {
	first := g.bal.Choose(app, list)
	if len(tried) == 0 || !wasTried(first, tried) {
		return first
	}
	for range list {
		if i := g.bal.Choose(app, list); !wasTried(i, tried) {
			return i
		}
	}
	return first
}

func wasTried(inst *eureka.InstanceInfo, tried []*eureka.InstanceInfo) bool {
	for _, t := range tried {
		if t == inst || t.ID() == inst.ID() {
			return true
		}
	}
	return false
}

// isIdempotent reports whether a request may be sent twice (RFC 9110
// section 9.2.2).
func isIdempotent(h *fasthttp.RequestHeader) bool {
	return h.IsGet() || h.IsHead() || h.IsOptions() || h.IsTrace() || h.IsPut() || h.IsDelete()
}

// timedOut reports whether err is a timeout.
func timedOut(err error) bool {
	if errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// nameCache maps the application names requests spell to the upper-case
// names Eureka stores, without an allocation per request. It only holds
// names of registered applications, and at most maxNames of them.
type nameCache struct {
	m  atomic.Pointer[map[string]string]
	mu sync.Mutex
}

const maxNames = 4096

// upper returns the upper-case name, and whether it came from the cache.
func (c *nameCache) upper(raw []byte) (string, bool) {
	if m := c.m.Load(); m != nil {
		if s, ok := (*m)[string(raw)]; ok {
			return s, true
		}
	}
	return routing.AppName(raw), false
}

func (c *nameCache) remember(raw []byte, app string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	n := 0
	if old != nil {
		n = len(*old)
	}
	next := make(map[string]string, n+1)
	if old != nil && n < maxNames {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[string(raw)] = app
	c.m.Store(&next)
}
