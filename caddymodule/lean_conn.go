package caddymodule

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"
)

// leanConn is a connection of the lean client to an instance, with its
// reader and writer, kept alive in the pool between attempts. Only the
// goroutine of the attempt that holds it uses it; the client's leaving
// reaches it through cancel, from the context's own goroutine.
type leanConn struct {
	conn net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	addr string
	// readTimeout bounds each read and each write: an instance silent
	// (or not taking the request) that long fails the attempt. Counting
	// a write as the instance's sign of life, as readTimeoutConn does,
	// lets an upload longer than it through.
	readTimeout time.Duration
	// headDeadline, while the response head is read, is when the
	// instance's ResponseHeaderTimeout ends (zero: none).
	headDeadline time.Time
	// The read and the write deadlines set last (see setDeadline).
	readDeadline, writeDeadline time.Time
	// headLeft is what the response head may still take while it is
	// read (limiting), as net/http's Transport counts it: the bytes read
	// from the connection, read-ahead included.
	headLeft int64
	limiting bool
	// got is how many bytes of the answer the attempt read (none: the
	// instance did not begin to answer), sent how many of the request
	// it wrote.
	got, sent int64
	// spent says the request could not be written whole: the
	// connection is not used again, whatever the answer.
	spent bool
	// The answer's body and its un-gzipping, kept with the connection.
	body leanBody
	gz   leanGzip
	// head reads the ordinary answers.
	head leanHead
	// idleSince is when the connection went back to the pool; reused
	// says it served an attempt before this one.
	idleSince time.Time
	reused    bool
	// peek is what stillOpen's look at the socket needs, made at the
	// first look.
	peek *leanPeek
	// canceled is set once the attempt's client left; ctx is the
	// attempt's request context while it is watched (see arm), and stop
	// ends the hook on its end once one is set.
	canceled atomic.Bool
	ctx      context.Context
	armed    time.Time // when the watch began
	stop     func() bool
}

// leanBufferSize is the size of a connection's reader and writer:
// net/http's.
const leanBufferSize = 4 << 10

// maxLeanResponseHead bounds an instance's response head (status line
// and headers, with the informational answers before it, forwarded or
// not, so that a flood of them ends): over it the attempt fails, 502.
// It is net/http's server's bound on a request head
// (DefaultMaxHeaderBytes).
const maxLeanResponseHead = 1 << 20

// errLeanHeadTooLarge is the error of a response head over
// maxLeanResponseHead.
var errLeanHeadTooLarge = fmt.Errorf("the instance's response head exceeded %d bytes", maxLeanResponseHead)

// errLeanCanceled is a read or a write of an attempt whose client left.
var errLeanCanceled = errors.New("the client went away")

// leanTimeout is a timeout of the lean client's own (the response
// head's), a net.Error that says so.
type leanTimeout string

func (e leanTimeout) Error() string   { return string(e) }
func (e leanTimeout) Timeout() bool   { return true }
func (e leanTimeout) Temporary() bool { return true }

// errLeanHeadTimeout is an instance that sent no response head within
// ResponseHeaderTimeout.
const errLeanHeadTimeout = leanTimeout("timeout awaiting the instance's response headers")

// longAgo is a deadline in the past: it aborts a blocked read or write.
var longAgo = time.Unix(1, 0)

func newLeanConn(c net.Conn, addr string, readTimeout time.Duration) *leanConn {
	lc := &leanConn{conn: c, addr: addr, readTimeout: readTimeout}
	lc.br = bufio.NewReaderSize(lc, leanBufferSize)
	lc.bw = bufio.NewWriterSize(lc, leanBufferSize)
	return lc
}

// Read reads from the instance for br: each read given readTimeout
// (while the head is read, ending at headDeadline at the latest; either
// cut sooner by leanDeadlineSlack at most), and the head bounded. A read
// of a watched attempt without its hook yet (see arm) sets it once the
// attempt is leanAnswerLook old, waiting no longer than that for it.
func (c *leanConn) Read(p []byte) (int, error) {
	if c.limiting {
		if c.headLeft <= 0 {
			return 0, errLeanHeadTooLarge
		}
		if int64(len(p)) > c.headLeft {
			p = p[:c.headLeft]
		}
	}
	now := time.Now()
	var end time.Time
	if c.readTimeout > 0 {
		end = now.Add(c.readTimeout)
	}
	for {
		d := end
		headCut := !c.headDeadline.IsZero() && (d.IsZero() || c.headDeadline.Before(d))
		if headCut {
			d = c.headDeadline
		}
		c.hookWhenOld(now)
		look := false
		if c.unhooked() {
			if l := c.armed.Add(leanAnswerLook); d.IsZero() || l.Before(d) {
				d, look, headCut = l, true, false
			}
		}
		if err := c.setDeadline(&c.readDeadline, d, c.conn.SetReadDeadline); err != nil {
			return 0, err
		}
		if c.canceled.Load() { // after the deadline: cancel's past one stays
			return 0, errLeanCanceled
		}
		n, err := c.conn.Read(p)
		c.got += int64(n)
		if c.limiting {
			c.headLeft -= int64(n)
		}
		if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && !c.canceled.Load() {
			if look && n == 0 {
				c.hook()
				now = time.Now()
				continue
			}
			if headCut {
				err = errLeanHeadTimeout
			}
		}
		return n, err
	}
}

// Write writes to the instance for bw, each write given readTimeout
// (less leanDeadlineSlack at most). A write that waits leanAnswerLook
// sets the attempt's hook on its client's leaving, if it has none yet,
// and looks whether the instance answered meanwhile (or closed): it then
// ends, errLeanAnswered, its answer to be read (as net/http's
// Transport, reading while it writes, has it), not waited for until
// readTimeout while the instance takes nothing more.
func (c *leanConn) Write(p []byte) (int, error) {
	now := time.Now()
	var end time.Time
	if c.readTimeout > 0 {
		end = now.Add(c.readTimeout)
	}
	written := 0
	c.hookWhenOld(now)
	for {
		d, look := now.Add(leanAnswerLook), true
		if !end.IsZero() && !d.Before(end) {
			d, look = end, false
		}
		if err := c.setDeadline(&c.writeDeadline, d, c.conn.SetWriteDeadline); err != nil {
			return written, err
		}
		if c.canceled.Load() {
			return written, errLeanCanceled
		}
		n, err := c.conn.Write(p[written:])
		written += n
		c.sent += int64(n)
		if err == nil || !look || !errors.Is(err, os.ErrDeadlineExceeded) || c.canceled.Load() {
			return written, err
		}
		c.hook()
		if !c.stillOpen() {
			return written, errLeanAnswered
		}
		now = time.Now()
	}
}

// leanAnswerLook is how long a write to the instance waits before it
// looks whether the instance answered instead of taking the request, and
// how long a read or a write of a watched attempt waits before it sets
// the hook on its client's leaving (see arm).
const leanAnswerLook = 100 * time.Millisecond

// errLeanAnswered is a write the instance stopped taking after it sent
// something: its answer, which the attempt reads.
var errLeanAnswered = errors.New("the instance answered before it took the whole request")

// leanDeadlineSlack is how much sooner than its timeout a read or a
// write may be cut: a deadline moves later only by more than that, so
// that the requests of a busy connection, a few milliseconds apart, do
// not each move the runtime's timers (a lock and a heap update each).
const leanDeadlineSlack = 10 * time.Millisecond

// setDeadline sets a deadline (set), of which *last is the one set
// before: at once when it comes sooner, or none, and when it comes
// more than leanDeadlineSlack later.
func (c *leanConn) setDeadline(last *time.Time, d time.Time, set func(time.Time) error) error {
	if d.Equal(*last) || (!d.IsZero() && !last.IsZero() && d.After(*last) && d.Sub(*last) <= leanDeadlineSlack) {
		return nil
	}
	*last = d
	return set(d)
}

// arm makes ctx's end abort the connection's reads and writes, until
// disarm. The hook that does it (context.AfterFunc: an allocation, and
// a place in the context's children taken under its lock and given back)
// is set only once the attempt is leanAnswerLook old, or at once when
// ctx already ended: the usual attempt, answered within it, costs none,
// and the instance's connection of a client that left is aborted within
// leanAnswerLook of the later of its leaving and the attempt's start.
func (c *leanConn) arm(ctx context.Context) {
	c.ctx, c.stop = nil, nil
	if ctx.Done() == nil {
		return
	}
	c.ctx, c.armed = ctx, time.Now()
	if ctx.Err() != nil {
		c.hook()
	}
}

// hookWhenOld sets the hook once the attempt is leanAnswerLook old (at
// now), so that an instance that keeps sending pieces, each read waiting
// less than that, still has its client's leaving seen.
func (c *leanConn) hookWhenOld(now time.Time) {
	if c.unhooked() && now.Sub(c.armed) >= leanAnswerLook {
		c.hook()
	}
}

// unhooked reports whether the attempt is watched and its hook not set
// yet.
func (c *leanConn) unhooked() bool { return c.ctx != nil && c.stop == nil }

// hook sets the hook on the watched attempt's client leaving, if it has
// none yet.
func (c *leanConn) hook() {
	if c.unhooked() {
		c.stop = context.AfterFunc(c.ctx, c.cancel)
	}
}

// disarm ends the watch on the attempt's client leaving, and reports
// false when it aborted the connection (which is not to be used again).
func (c *leanConn) disarm() bool {
	ok := !c.canceled.Load()
	if c.stop != nil {
		ok = c.stop() && ok
	}
	c.ctx, c.stop = nil, nil
	return ok
}

// cancel aborts the connection's reads and writes, for good.
func (c *leanConn) cancel() {
	c.canceled.Store(true)
	c.conn.SetDeadline(longAgo)
}

// close closes the connection.
func (c *leanConn) close() { c.conn.Close() }
