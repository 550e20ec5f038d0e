package gateway

import "github.com/eurekagate/eurekagate/balancer"

// sendTo sends the request on a connection to the instance at key.
func (lp *loopState) sendTo(ex *exchange, key instKey) {
	if up := lp.takeIdle(key); up != nil {
		lp.write(up, ex)
		return
	}
	if lp.conns[key] >= lp.maxConns {
		// Wait for one to come free (putIdle) or close (uncount), as
		// fasthttp's pool waits; the tick answers 503 after DialTimeout.
		ex.up, ex.queued, ex.key, ex.sent = nil, true, key, lp.mono
		lp.waiting[key] = append(lp.waiting[key], ex)
		return
	}
	up := &upConn{lp: lp, key: key, addr: balancer.Address(ex.inst, false), ex: ex, counted: true}
	lp.conns[key]++
	lp.l.g.loopConns(key).Add(1)
	ex.up = up
	ex.sent = lp.mono
	lp.setHost(ex, up)
	lp.dial(up)
}

func (lp *loopState) setHost(ex *exchange, up *upConn) {
	if lp.l.g.cfg.RewriteHost || len(ex.h.Host()) == 0 {
		ex.h.SetHost(up.addr)
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
	up.since = lp.mono
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
	lp.l.g.loopConns(up.key).Add(-1)
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
