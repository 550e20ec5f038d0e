package gateway

import (
	"github.com/panjf2000/gnet/v2"
	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/routing"
)

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
	if stale && !ex.resent && ex.resend && !timedOut(err) && !closing {
		ex.resent = true
		if g.countInFlight {
			ex.end = ex.try.Begin()
		}
		lp.sendTo(ex, keyOf(ex.app, ex.inst, false))
		return
	}
	f := failureOf(err)
	g.logFailure(ex.app, ex.inst, balancer.Address(ex.inst, false), ex.try.Attempt(), err)
	again := ex.try.Failed(f) && !closing
	ex.obs.Failed(f, again)
	if again {
		ex.resent = false
		lp.send(ex)
		return
	}
	lp.reply(ex, routing.Failed(ex.name, f))
}

// reply answers the exchange's client with a short plain-text message, as
// plain does on the fasthttp path, and goes on with the client's next
// request.
func (lp *loopState) reply(ex *exchange, a routing.Answer) {
	cc := ex.cc
	lp.answerPlain(ex, a)
	lp.next(cc)
}

// answerPlain writes reply's message, with the headers of the rate limit or
// circuit breaker that refused the request (ex.limit), if one did.
func (lp *loopState) answerPlain(ex *exchange, a routing.Answer) {
	cc := ex.cc
	if lp.l.stopping.Load() {
		cc.closing = true
	}
	lp.out = keepAlive10(appendPlain(lp.out[:0], a.Status, len(a.Reason), cc.closing, &ex.limit), ex)
	size := 0
	if !ex.head {
		lp.out = append(lp.out, a.Reason...)
		size = len(a.Reason)
	}
	ex.obs.doneAt(&ex.h, a.Status, int64(size), lp.wall)
	lp.finish(ex)
	cc.c.Write(lp.out)
}

// appendPlain appends the header of a short plain-text answer of n bytes
// with status, saying Connection: close when closing, and l's headers
// (limitHeaders).
func appendPlain(dst []byte, status, n int, closing bool, l *routing.Limited) []byte {
	var h fasthttp.ResponseHeader
	setPlain(&h, status)
	limitHeaders(&h, l)
	h.SetContentLength(n)
	if closing {
		h.SetConnectionClose()
	}
	return h.AppendBytes(dst)
}
