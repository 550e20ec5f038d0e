package caddymodule

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// bufferedLogs are eureka_buffered's buffers, one per wrapped writer's
// key, each with the configs that hold it. A buffer stays as long as
// Caddy keeps its writer (Caddy 2.11 keeps it for the process); Close,
// should Caddy call it, forgets it.
var bufferedLogs = bufferedLogSet{logs: map[string]*bufferedLog{}}

type bufferedLogSet struct {
	sync.Mutex
	logs map[string]*bufferedLog
}

// hold returns the buffer of key with a hold taken for a config, and
// the config's settings set on it.
func (s *bufferedLogSet) hold(key string, size int, interval time.Duration, after func(time.Duration, func()) func() bool, errOut io.Writer) *bufferedLog {
	s.Lock()
	defer s.Unlock()
	l := s.logs[key]
	if l == nil {
		l = &bufferedLog{key: key, after: after, errOut: errOut}
		if l.after == nil {
			l.after = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
		}
		if l.errOut == nil {
			l.errOut = os.Stderr
		}
		s.logs[key] = l
	}
	l.hold(size, interval)
	return l
}

// forget drops l from the set, when it is closed.
func (s *bufferedLogSet) forget(l *bufferedLog) {
	s.Lock()
	defer s.Unlock()
	if s.logs[l.key] == l {
		delete(s.logs, l.key)
	}
}

// errLogNotOpen is a write straight through before Caddy opened the
// wrapped writer, which Caddy does before it logs.
var errLogNotOpen = errors.New("eureka_buffered: the log's writer is not open")

// bufferedLog is the buffer in front of one wrapped writer. It has no
// goroutine of its own: a timer, armed by the first entry into an empty
// buffer, writes the buffer when the interval has passed, so an idle log
// costs nothing.
type bufferedLog struct {
	key    string
	after  func(time.Duration, func()) (stop func() bool)
	errOut io.Writer // where the failed writes of entries already taken go

	mu       sync.Mutex
	under    io.WriteCloser // nil until Caddy opens the writer
	size     int
	interval time.Duration
	holds    int // the configs that have the log; none: entries go straight through
	buf      []byte
	stop     func() bool // the armed timer's; nil when none is
	timer    uint64      // the armed timer's number, so a late tick of an older one leaves it armed
	closed   bool
}

// hold takes a config's hold with its settings; a buffer of another size
// is written first, and made anew at the next entry.
func (l *bufferedLog) hold(size int, interval time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf != nil && cap(l.buf) != size {
		l.report(l.flushLocked())
		l.buf = nil
	}
	l.size, l.interval = size, interval
	l.holds++
}

// release lets go of a config's hold; the last to let go writes what is
// buffered, and the entries after it are written at once.
func (l *bufferedLog) release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holds--
	if l.holds > 0 {
		return nil
	}
	l.disarmLocked()
	return l.flushLocked()
}

// attach puts the opened wrapped writer behind the buffer.
func (l *bufferedLog) attach(w io.WriteCloser) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.under = w
}

// Write takes an entry. The buffer is written first when the entry does
// not fit, so no entry is split across two writes; an entry as long as
// the buffer, and every entry while no config has the log, is written at
// once. A failed write of the buffer goes to errOut and drops that chunk
// alone: the entry is still taken.
func (l *bufferedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, os.ErrClosed
	}
	direct := l.holds <= 0 || len(p) >= l.size
	if direct || len(l.buf)+len(p) > l.size {
		l.report(l.flushLocked())
	}
	if direct {
		if l.under == nil {
			return 0, errLogNotOpen
		}
		return l.under.Write(p)
	}
	if l.buf == nil {
		l.buf = make([]byte, 0, l.size)
	}
	l.buf = append(l.buf, p...)
	if l.stop == nil {
		l.timer++
		n := l.timer
		l.stop = l.after(l.interval, func() { l.tick(n) })
	}
	return len(p), nil
}

// tick is timer n's: the oldest entry has waited the interval.
func (l *bufferedLog) tick(n uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n == l.timer {
		l.stop = nil
	}
	l.report(l.flushLocked())
}

// report sends a failed write of entries already taken to errOut, as zap
// reports the writes of Caddy's writers that fail (not to a log, which
// may be this one).
func (l *bufferedLog) report(err error) {
	if err != nil {
		fmt.Fprintf(l.errOut, "%s eureka_buffered: writing the log's entries: %v\n", time.Now().UTC().Format(time.RFC3339), err)
	}
}

// flushLocked writes the buffer to the wrapped writer. What a failed
// write held is dropped, so that one failure does not fail every entry
// after it.
func (l *bufferedLog) flushLocked() error {
	if len(l.buf) == 0 || l.under == nil {
		return nil
	}
	_, err := l.under.Write(l.buf)
	l.buf = l.buf[:0]
	return err
}

func (l *bufferedLog) disarmLocked() {
	if l.stop != nil {
		l.stop()
		l.stop = nil
	}
}

// Close writes what is buffered and closes the wrapped writer; Caddy
// would call it when no config uses the writer (Caddy 2.11 never does).
func (l *bufferedLog) Close() error {
	l.mu.Lock()
	l.disarmLocked()
	err := l.flushLocked()
	l.closed = true
	under := l.under
	l.mu.Unlock()
	bufferedLogs.forget(l)
	if under != nil {
		if cerr := under.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
