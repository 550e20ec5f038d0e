package gateway

import (
	"bytes"

	"github.com/panjf2000/gnet/v2"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
)

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
				cc.headerStart = lp.mono // the tick cuts it at HeaderTimeout
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
		if ex.refused.Status != 0 {
			lp.answerPlain(ex, ex.refused)
			if cc.closing {
				lp.next(cc) // closes it, once flushed
				return gnet.None
			}
			continue
		}
		lp.send(ex)
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
	g := lp.l.g
	var clean [512]byte
	rr := g.ruleRequest(h, cc.remote)
	rt, name, path := g.router.Route(clean[:0], uri, &rr)
	if rt.Other || rt.Answer.Status != 0 || rt.Secure {
		// fasthttp serves it: the other handler, the router's answer,
		// or the instances' secure port over TLS.
		return false
	}
	closing := h.ConnectionClose() // stripRequest forgets it
	req := stripRequest(h, &lp.hops)
	if req.upgrade || req.expect {
		// fasthttp answers Expect: 100-continue, and tunnels upgrades.
		return false
	}
	refused := !g.router.Limit(&rt, &rr)
	// Observed from here, as the client sent it: the loop serves it.
	if g.log != nil && cc.logRemote == nil {
		cc.logRemote = appendRemote(nil, cc.remote) // once a connection
	}
	ex.line.remote, ex.line.noClientID = cc.logRemote, req.has&hasRequestID == 0
	g.beginAt(&ex.obs, h, cc.remote, &ex.line, lp.wall)
	g.observe(&ex.obs, &rt)
	if refused {
		// The loop answers the 429 or 503 itself: the fasthttp path
		// would decide the request anew, counting it again in the
		// limits it passed.
		ex.refused, ex.limit = rt.Answer, rt.Limit
		ex.cc, ex.app, ex.head = cc, rt.App, h.IsHead()
		cc.ex = ex
		cc.closing = cc.closing || closing
		return true
	}
	if req.has&^hasRequestID == 0 {
		// What setForwarded would add, written straight after the
		// header: the common case, without four header edits.
		f := append(ex.fwd[:0], "X-Forwarded-For: "...)
		f = append(append(f, cc.ip...), "\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: "...)
		f = append(append(f, h.Host()...), "\r\nX-Forwarded-Prefix: "...)
		f = append(routing.AppendPrefix(f, "", false, name), "\r\n"...)
		idStart, idEnd := 0, 0 // the request id's, in f
		if !g.cfg.DisableRequestID && !g.clientRequestID(h, req, cc.remote) {
			f = append(f, routing.RequestIDHeader+": "...)
			idStart = len(f)
			f = routing.AppendRequestID(f)
			idEnd = len(f)
			f = append(f, "\r\n"...)
		}
		if rt.Subset != nil {
			f = append(append(append(f, balancer.RouteHeader+": "...), rt.Subset.Label()...), "\r\n"...)
		}
		if rt.Region != "" {
			f = append(append(append(f, routing.RegionHeader+": "...), rt.Region...), "\r\n"...)
		}
		ex.fwd = f
		if idEnd > 0 {
			ex.obs.reqID = f[idStart:idEnd] // for the access log
		}
	} else {
		g.setForwarded(h, cc.remote, false, name, req, routeLabel(&rt), rt.Region)
		g.setRequestID(h, req, cc.remote)
	}
	ex.name = append(ex.name[:0], name...)
	var buf [512]byte
	h.SetRequestURIBytes(append(buf[:0], path...))

	ex.cc, ex.app = cc, rt.App
	ex.resend, ex.head = routing.Resendable(h.Method(), true), h.IsHead() // no body
	ex.try = g.router.Retry(&rt, ex.resend)
	cc.ex = ex
	cc.closing = cc.closing || closing
	return true
}

// send sends the exchange's request to the instance the router's Retry
// picks: on a kept-alive connection of this loop, or on a new one.
func (lp *loopState) send(ex *exchange) {
	lp.sendTo(ex, keyOf(ex.app, lp.attempt(ex), false))
}

// attempt starts the exchange's next attempt, and returns its instance.
func (lp *loopState) attempt(ex *exchange) *eureka.InstanceInfo {
	inst := ex.try.Next()
	ex.inst = inst
	ex.obs.attempt(inst)
	if lp.l.g.countInFlight {
		ex.end = ex.try.Begin()
	}
	return inst
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
	ex.obs.abandon(&ex.h) // a no-op when the answer was counted, else a 499 logged
	ex.obs = observed{}
	ex.h.Reset()
	ex.fwd, ex.name = ex.fwd[:0], ex.name[:0]
	ex.cc, ex.app, ex.inst, ex.up, ex.end = nil, "", nil, nil, nil
	ex.try, ex.sent, ex.asked = balancer.Retry{}, 0, 0
	ex.refused, ex.limit = routing.Answer{}, routing.Limited{}
	ex.resend, ex.head, ex.resent, ex.queued, ex.key = false, false, false, false, instKey{}
	if len(lp.free) < 1024 {
		lp.free = append(lp.free, ex)
	}
}
