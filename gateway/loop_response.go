package gateway

import (
	"errors"
	"strconv"

	"github.com/panjf2000/gnet/v2"
	"github.com/valyala/fasthttp"
)

// write sends the request on up.
func (lp *loopState) write(up *upConn, ex *exchange) {
	up.ex, ex.up = ex, up
	up.got, up.headed = false, false
	ex.sent = lp.mono
	ex.asked = ex.sent
	lp.setHost(ex, up)
	up.c.Write(lp.request(ex)) // a failure closes up: OnClose fails the request
}

// request returns the exchange's request as the instance gets it, in
// lp.out.
func (lp *loopState) request(ex *exchange) []byte {
	lp.out = ex.h.AppendBytes(lp.out[:0])
	if len(ex.fwd) > 0 { // before the blank line that ends the header
		lp.out = append(append(lp.out[:len(lp.out)-2], ex.fwd...), "\r\n"...)
	}
	return lp.out
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
	ex.sent = lp.mono
	for {
		buf, _ := up.c.Peek(-1)
		hl := headerLen(buf)
		if hl < 0 {
			if len(buf) >= bufferSize {
				return lp.broken(up, ex, errors.New("gateway: response header too large"))
			}
			return gnet.None
		}
		h, err := lp.responseHeader(buf[:hl])
		if err != nil {
			return lp.broken(up, ex, err)
		}
		status := h.StatusCode()
		if status >= 100 && status < 200 && status != fasthttp.StatusSwitchingProtocols {
			up.c.Discard(hl) // informational: the response follows
			continue
		}
		if status == fasthttp.StatusSwitchingProtocols {
			return lp.broken(up, ex, errors.New("gateway: 101 to a request without Upgrade"))
		}
		up.headed = true // ResponseHeaderTimeout no longer applies
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

// responseHeader reads an instance's response header, all of header,
// into lp.respH.
func (lp *loopState) responseHeader(header []byte) (*fasthttp.ResponseHeader, error) {
	h := &lp.respH
	h.SetNoDefaultContentType(true) // as the instance sent it
	lp.rd.Reset(header)
	lp.br.Reset(&lp.rd)
	if err := h.Read(lp.br); err != nil {
		return nil, err
	}
	if lp.rd.Len()+lp.br.Buffered() != 0 {
		return nil, errors.New("gateway: malformed response header")
	}
	return h, nil
}

// respond writes a whole response to the client, and hands the instance's
// connection back to the pool (or closes it when the instance said so).
func (lp *loopState) respond(up *upConn, ex *exchange, h *fasthttp.ResponseHeader, body []byte, size int) gnet.Action {
	upClose := h.ConnectionClose()
	cc := ex.cc
	out := lp.response(ex, h, body)
	up.c.Discard(size)
	up.ex, ex.up = nil, nil
	lp.finish(ex)
	cc.c.Write(out) // before putIdle, which may send a waiting request (lp.out)
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

// response returns, in lp.out, the response of header h and body the
// client gets for ex, and ends ex's attempt and observation as a success.
func (lp *loopState) response(ex *exchange, h *fasthttp.ResponseHeader, body []byte) []byte {
	stripResponse(h, false, &lp.hops) // adds a Date when the instance sent none
	cc := ex.cc
	if cc.closing || lp.l.stopping.Load() {
		cc.closing = true
		h.SetConnectionClose()
	}
	lp.out = keepAlive10(appendResponse(lp.out[:0], h), ex)
	lp.out = append(lp.out, body...)
	ex.try.Succeeded()
	ex.obs.doneAt(&ex.h, h.StatusCode(), int64(len(body)), lp.wall)
	return lp.out
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

// keepAlive10 ends head, a response's head to ex's client, with
// Connection: keep-alive when that client speaks HTTP/1.0 and its
// connection stays open: an HTTP/1.0 client that asked to keep the
// connection is told it is kept, as fasthttp tells it.
func keepAlive10(head []byte, ex *exchange) []byte {
	if ex.cc.closing || ex.h.IsHTTP11() {
		return head
	}
	return append(head[:len(head)-2], "Connection: keep-alive\r\n\r\n"...)
}
