package gateway

import (
	"context"
	"time"

	"github.com/panjf2000/gnet/v2"
)

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
				case <-time.After(l.g.cfg.Routing.DialTimeout):
					// The loop did not take it (stopping): the tick
					// fails the request.
					return
				}
			}
		}
		if err != nil {
			lp.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
				lp.clock()
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
