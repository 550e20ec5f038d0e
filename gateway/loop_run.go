package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/valyala/fasthttp"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/routing"

	"github.com/eurekagate/eurekagate/internal/fastserve"
	"github.com/eurekagate/eurekagate/internal/tick"
)

// newLoops returns the event-loop front for g, serving n loops and
// handing connections to h.
func newLoops(g *Gateway, cfg ServerConfig, h *handoffListener, n int) *loops {
	l := &loops{g: g, cfg: cfg, handoff: h, n: n,
		accepted: make(chan struct{}), tickStop: make(chan struct{}), ticked: make(chan struct{})}
	// The timeouts are checked at a tick: an eighth of the shortest, so
	// none runs over by more than that, within [10ms, 1s].
	l.interval = min(cfg.ReadTimeout, cfg.HeaderTimeout, cfg.WriteTimeout, g.cfg.Routing.ReadTimeout, g.cfg.IdleConnTimeout, g.cfg.SweepInterval)
	if h := g.cfg.Routing.ResponseHeaderTimeout; h > 0 { // negative: none
		l.interval = min(l.interval, h)
	}
	l.interval /= 8
	l.interval = max(10*time.Millisecond, min(l.interval, time.Second))
	return l
}

// start runs the loops and takes the connections ln accepts.
func (l *loops) start(ln net.Listener) error {
	cli, err := gnet.NewClient(l,
		gnet.WithMulticore(true),
		gnet.WithNumEventLoop(l.n),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithReadBufferCap(64<<10),
		gnet.WithLogger(l.g.cfg.Logger.WithOptions(zap.IncreaseLevel(zap.WarnLevel)).Sugar()),
	)
	if err == nil {
		err = cli.Start()
	}
	if err != nil {
		ln.Close()
		return fmt.Errorf("gateway: starting the event loops: %w", err)
	}
	l.cli, l.ln, l.addr = cli, fastserve.KeepAccepting(ln, "gateway", l.g.cfg.Logger), ln.Addr()
	go func() {
		defer close(l.accepted)
		l.accept()
	}()
	go func() {
		defer close(l.ticked)
		tick.Every(l.interval, l.tickStop, nil, l.tickAll)
	}()
	return nil
}

// accept takes connections until the listener closes, and enrolls each
// on a loop (the one with the fewest). The listener outlives temporary
// failures (fastserve.KeepAccepting).
func (l *loops) accept() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				l.g.cfg.Logger.Error("accepting connections failed for good", zap.String("server", "gateway"), zap.Error(err))
			}
			return
		}
		if _, err := l.cli.Enroll(c); err != nil {
			c.Close()
		}
	}
}

// tickAll runs tick on every loop.
func (l *loops) tickAll() {
	l.states.Range(func(_, v any) bool {
		lp := v.(*loopState)
		lp.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
			lp.tick()
			return nil
		}))
		return true
	})
}

// tick enforces the timeouts, closes what a stop or a departed instance
// leaves idle, and hands over the connections that waited for their
// responses to be flushed.
func (lp *loopState) tick() {
	lp.clock()
	t := lp.mono
	l := lp.l
	stopping := l.stopping.Load()
	clientRead, write, clientHeader := int64(l.cfg.ReadTimeout), int64(l.cfg.WriteTimeout), int64(l.cfg.HeaderTimeout)
	header, read := int64(l.g.cfg.Routing.ResponseHeaderTimeout), int64(l.g.cfg.Routing.ReadTimeout)
	dial := int64(l.g.cfg.Routing.DialTimeout + time.Second)
	for cc := range lp.clients {
		// A client that takes nothing of what is queued for it for
		// WriteTimeout has stopped reading.
		if queued := cc.c.OutboundBuffered(); queued > 0 {
			if queued != cc.pending || cc.stalled == 0 {
				cc.pending, cc.stalled = queued, t
			} else if t-cc.stalled > write {
				lp.close(cc)
				continue
			}
		} else {
			cc.pending, cc.stalled = 0, 0
			switch {
			case cc.drain:
				lp.close(cc)
				continue
			case cc.handoff:
				if lp.handoff(cc) == gnet.Close {
					lp.el.Close(cc.c)
				}
				continue
			}
		}
		if ex := cc.ex; ex != nil {
			switch up := ex.up; {
			case up == nil:
			case up.c != nil && ((!up.headed && header > 0 && t-ex.asked > header) || t-ex.sent > read):
				up.ex, up.gone = nil, true
				lp.el.Close(up.c)
				lp.failed(ex, errTimeout, false)
			case up.c == nil && t-ex.sent > dial:
				// The dial never reported (the loop stopping, say).
				up.ex = nil
				lp.uncount(up)
				lp.failed(ex, &dialError{errTimeout}, false)
			}
			continue
		}
		if cc.stalled != 0 || cc.drain || cc.handoff {
			continue
		}
		switch {
		case stopping || t-cc.last > clientRead:
			lp.close(cc)
		case cc.headerStart != 0 && t-cc.headerStart > clientHeader:
			lp.refuse(cc, fasthttp.StatusRequestTimeout, "Request timeout")
		case cc.c.InboundBuffered() > 0:
			// Requests that waited for the client to read (maxUnread).
			lp.serveLater(cc)
		}
	}
	// Requests that waited DialTimeout for a connection, all busy.
	wait := int64(l.g.cfg.Routing.DialTimeout)
	var expired []*exchange
	for key := range lp.waiting {
		var kept []*exchange
		for _, ex := range lp.waiting[key] {
			switch {
			case !ex.waitsFor(key):
				// answered, or its client left
			case t-ex.sent > wait:
				ex.queued = false
				expired = append(expired, ex)
			default:
				kept = append(kept, ex)
			}
		}
		if len(kept) == 0 {
			delete(lp.waiting, key)
		} else {
			lp.waiting[key] = kept
		}
	}
	// Answered after the lists are rewritten: an answer may start the
	// client's next request, which may queue.
	for _, ex := range expired {
		lp.reply(ex, routing.Busy(ex.name))
	}
	idle := int64(l.g.cfg.IdleConnTimeout)
	for key, list := range lp.idle {
		listed := !stopping && l.g.listed(key)
		kept := list[:0]
		for _, up := range list {
			switch {
			case up.gone:
			case !listed || t-up.since > idle:
				up.gone = true
				lp.el.Close(up.c)
			default:
				kept = append(kept, up)
			}
		}
		clear(list[len(kept):])
		if len(kept) == 0 {
			delete(lp.idle, key)
		} else {
			lp.idle[key] = kept
		}
	}
}

// refuse answers a client with a short plain-text message and closes its
// connection once the answer is flushed, reading nothing more of it: a
// header that took longer than HeaderTimeout (408, as fasthttp answers it
// on the other path), one that fasthttp could not read (400).
func (lp *loopState) refuse(cc *clientConn, status int, msg string) {
	lp.out = append(appendPlain(lp.out[:0], status, len(msg), true, nil), msg...)
	cc.c.Discard(-1)
	cc.c.Write(lp.out)
	cc.headerStart = 0
	cc.drain = true // the next tick closes it once flushed; serve reads no more
}

// errTimeout is an instance that did not answer within
// ResponseHeaderTimeout, or went silent for ResponseReadTimeout.
var errTimeout = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string   { return "gateway: the instance did not answer in time" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// stop stops taking connections, closes the idle ones, lets the requests
// in flight finish (until ctx is done), then stops the loops and waits
// for the goroutines they started.
func (l *loops) stop(ctx context.Context) error {
	l.stopping.Store(true)
	l.ln.Close()
	<-l.accepted
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	var err error
	for l.clients.Load() > 0 && err == nil {
		l.tickAll()
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-t.C:
		}
	}
	close(l.tickStop)
	<-l.ticked
	l.closing.Store(true) // no more retries or dials
	// Closes the connections left, to clients and to instances.
	err = errors.Join(err, l.cli.Stop())
	done := make(chan struct{})
	go func() {
		l.work.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		err = errors.Join(err, ctx.Err())
	}
	return err
}
