package gateway

import (
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// observed is what the gateway saw of one request, on either path, for
// the traffic counters and the access log: what both gateways count
// (traffic.Observed), the instance of the current attempt, and the
// access log's line.
type observed struct {
	traffic.Observed
	ended time.Time // when the client had its status
	inst  *eureka.InstanceInfo
	line  *logLine // nil: not logged
	// reqID is the X-Request-Id the instance got when it is not in the
	// request's header (the loops write it after the header); nil: the
	// header's.
	reqID []byte
}

// begin starts the observation of a request as the client sent it,
// before the gateway changes it (its URI, its Host): the access log's
// line, when the log is on, takes its request part, in own when given
// (the loops' exchange has its line), else in one from the log's pool.
func (g *Gateway) begin(o *observed, h *fasthttp.RequestHeader, remote net.Addr, own *logLine) {
	g.beginAt(o, h, remote, own, time.Now())
}

// beginAt is begin for a request that came at t (the loops' event).
func (g *Gateway) beginAt(o *observed, h *fasthttp.RequestHeader, remote net.Addr, own *logLine, t time.Time) {
	o.Begun = t
	if g.log == nil {
		return
	}
	if own == nil {
		own = g.log.get()
	} else {
		own.log = g.log
	}
	own.begun = o.Begun
	own.request(h, remote)
	o.line = own
}

// observe goes on with the observation of a request routed as rt: its
// traffic is counted from now.
func (g *Gateway) observe(o *observed, rt *routing.Route) {
	if g.traffic == nil && o.line == nil && !rt.Guard.Held() {
		return
	}
	if g.traffic != nil {
		g.startSweeper() // which drops the counters of departed apps
	}
	o.Route(g.traffic, rt)
}

// attempt records that an attempt goes to inst.
func (o *observed) attempt(inst *eureka.InstanceInfo) {
	o.inst = inst
	o.AttemptAt(inst)
}

// done ends the observation of the request of header h: the client got
// status and size bytes of body.
func (o *observed) done(h *fasthttp.RequestHeader, status int, size int64) {
	o.doneAt(h, status, size, time.Now())
}

// doneAt is done for a client that got its answer at t (the loops'
// event).
func (o *observed) doneAt(h *fasthttp.RequestHeader, status int, size int64, t time.Time) {
	if l := o.answeredAt(h, status, t); l != nil {
		l.finishAt(size, o.ended)
	}
}

// answered ends the traffic's count of the request of header h once the
// client has its status, the body to follow, and returns the access
// log's line (nil when there is none), for the caller to finish when the
// body has gone.
func (o *observed) answered(h *fasthttp.RequestHeader, status int) *logLine {
	return o.answeredAt(h, status, time.Now())
}

// answeredAt is answered at t.
func (o *observed) answeredAt(h *fasthttp.RequestHeader, status int, t time.Time) *logLine {
	if !o.Active() && o.line == nil && !o.Guarded() {
		o.EndAttempt()
		return nil
	}
	o.ended = t
	o.End(h.Method(), status, o.ended)
	return o.endLine(h, status)
}

// abandon ends the observation of a request whose client went away
// before its answer: no longer in flight, and not counted; logged with
// status 499. Once the observation has ended it does nothing.
func (o *observed) abandon(h *fasthttp.RequestHeader) {
	o.Abandon()
	if l := o.endLine(h, statusClientClosed); l != nil {
		l.finish(0)
	}
}

// endLine adds to the access log's line what the gateway did with the
// request, and hands the line over.
func (o *observed) endLine(h *fasthttp.RequestHeader, status int) *logLine {
	l := o.line
	if l == nil {
		return nil
	}
	o.line = nil
	id := o.reqID
	if id == nil {
		id = h.PeekBytes(headerRequestID)
	}
	var inst string
	if o.inst != nil {
		inst = o.inst.ID()
	} else {
		id = nil // no instance got it: the client's, as it came
	}
	l.response(o.App, o.Subset, o.FailoverRegion, inst, o.Retries, id, status)
	if o.Limited != "" {
		l.limited(o.Limited)
	}
	if o.Breaker != "" {
		l.breakerOpen(o.Breaker)
	}
	return l
}

// served ends the observation of a request the fasthttp path answered
// with ctx's response: when its body streams, the access log's line
// waits for it to have gone.
func (o *observed) served(ctx *fasthttp.RequestCtx) {
	resp := &ctx.Response
	status := resp.StatusCode()
	// A tunnel sets 101; a lingering close is hijacked too, with its answer.
	tunnel := ctx.Hijacked() && status == fasthttp.StatusSwitchingProtocols
	l := o.answered(&ctx.Request.Header, status)
	switch {
	case l == nil:
	case tunnel || ctx.IsHead() || resp.SkipBody:
		l.finish(0)
	case resp.IsBodyStream():
		logStream(resp, l)
	default:
		l.finish(int64(len(resp.Body())))
	}
}

// setRequestID leaves the request of header h (as stripRequest found it,
// req) one X-Request-Id for the instance, unless the config says not to
// touch it: the client's when routing.KeepRequestID keeps it (a trusted
// proxy's, or one of the safe form), else a new one.
func (g *Gateway) setRequestID(h *fasthttp.RequestHeader, req request, remote net.Addr) {
	if g.cfg.DisableRequestID || g.clientRequestID(h, req, remote) {
		return
	}
	var buf [32]byte
	h.SetBytesKV(headerRequestID, routing.AppendRequestID(buf[:0]))
}

// clientRequestID keeps one copy of the client's X-Request-Id when
// routing.KeepRequestID keeps the first, and removes every copy
// otherwise; it reports whether one is left.
func (g *Gateway) clientRequestID(h *fasthttp.RequestHeader, req request, remote net.Addr) bool {
	if req.has&hasRequestID == 0 {
		return false
	}
	v := h.PeekBytes(headerRequestID)
	if !routing.KeepRequestID(v, g.router.Trusted(remote)) {
		h.DelBytes(headerRequestID)
		return false
	}
	if req.dup&hasRequestID != 0 {
		v = append([]byte(nil), v...) // h is rebuilt under it
		h.DelBytes(headerRequestID)
		h.SetBytesKV(headerRequestID, v)
	}
	return true
}

var headerRequestID = []byte(routing.RequestIDHeader)
