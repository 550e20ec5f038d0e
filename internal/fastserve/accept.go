package fastserve

import (
	"errors"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// acceptErrors counts the failed Accepts of each server of this process,
// by name ("registry", "gateway").
var acceptErrors sync.Map // string -> *atomic.Uint64

// CountAcceptError counts a failed Accept of the server called name.
func CountAcceptError(name string) {
	v, ok := acceptErrors.Load(name)
	if !ok {
		v, _ = acceptErrors.LoadOrStore(name, new(atomic.Uint64))
	}
	v.(*atomic.Uint64).Add(1)
}

// AcceptErrorCount is how many Accepts of the server Name have failed.
type AcceptErrorCount struct {
	Name  string
	Count uint64
}

// AcceptErrors returns the failed Accepts of the servers of this process
// that had any, by name.
func AcceptErrors() []AcceptErrorCount {
	var out []AcceptErrorCount
	acceptErrors.Range(func(k, v any) bool {
		out = append(out, AcceptErrorCount{k.(string), v.(*atomic.Uint64).Load()})
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Backoff is the wait after the n'th failed Accept in a row (n from 1):
// 5 ms, doubling up to 500 ms (net/http waits up to 1 s), so that a server
// answers within a second of the descriptors coming back.
func Backoff(n int) time.Duration {
	const most = 500 * time.Millisecond
	d := 5 * time.Millisecond
	for i := 1; i < n && d < most; i++ {
		d *= 2
	}
	return min(d, most)
}

// keepAccepting is a listener whose Accept outlives a temporary failure:
// fasthttp's Serve returns on any error but a timeout, so that a moment
// without file descriptors (EMFILE, ENFILE) would stop the server for
// good. It logs and counts each such failure, waits (Backoff) and tries
// again, until the listener is closed; another error ends Accept.
type keepAccepting struct {
	net.Listener
	name   string
	log    *zap.Logger
	closed chan struct{}
	once   sync.Once
}

func (l *keepAccepting) Accept() (net.Conn, error) {
	failed := 0
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			return c, nil
		}
		select {
		case <-l.closed:
			return nil, err
		default:
		}
		if errors.Is(err, net.ErrClosed) || !temporary(err) {
			return nil, err
		}
		failed++
		wait := Backoff(failed)
		CountAcceptError(l.name)
		l.log.Warn("accepting a connection failed; trying again", zap.String("server", l.name),
			zap.Error(err), zap.Duration("retry_in", wait))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-l.closed:
			t.Stop()
			return nil, net.ErrClosed
		}
	}
}

// temporary reports whether a failed Accept may succeed if tried again:
// out of file descriptors or memory, a connection aborted before it was
// taken (the errors net/http retries on).
func temporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// KeepAccepting returns ln with an Accept that outlives temporary
// failures, each logged to log and counted as name's (see AcceptErrors);
// Close wakes an Accept waiting between tries. Runner wraps its listener
// with it; the gateway's event loops, which accept for themselves, do too.
func KeepAccepting(ln net.Listener, name string, log *zap.Logger) net.Listener {
	if log == nil {
		log = zap.NewNop()
	}
	return &keepAccepting{Listener: ln, name: name, log: log, closed: make(chan struct{})}
}

func (l *keepAccepting) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}
