package gateway

import (
	"bytes"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/routing"
)

// DefaultAccessLogBuffer is the default of Config.AccessLogBuffer: the
// bytes of access log lines that may wait for the writer, some 10,000
// lines.
const DefaultAccessLogBuffer = 4 << 20

const (
	// accessLogFlush is how often the writer takes the lines queued: a
	// line is written within a second (at most this long plus a Write).
	accessLogFlush = 500 * time.Millisecond
	// accessLogWake is how much queued wakes the writer before its tick,
	// so that it writes in chunks of about this size under load.
	accessLogWake = 64 << 10
	// maxPooledLine bounds the lines kept for reuse: a longer one (a
	// long request URI) goes to the garbage collector.
	maxPooledLine = 16 << 10
	// statusClientClosed is the status logged for a request whose client
	// went away before its answer, as nginx and Caddy log it.
	statusClientClosed = 499
)

// The fixed parts of a line, as Caddy's access log writes them: its
// level, time (seconds since the epoch, a float), logger and message
// come first.
const (
	lineLevel  = `{"level":"info","ts":`
	lineLogger = `,"logger":"http.log.access","msg":"handled request",`
	// lineRoom is the room left before a line's request part for its
	// head (level, ts, logger, msg), which is written last, when the
	// time is known: the line starts where its head does.
	lineRoom = len(lineLevel) + 32 + len(lineLogger)
)

// accessLog is a gateway's access log (Config.AccessLog). The request
// goroutines and loops format their lines themselves and append them to
// a buffer under a lock; one goroutine, the writer, swaps that buffer
// for its own empty one at least every accessLogFlush and writes what it
// took in one Write. A line that finds limit bytes waiting is dropped
// and counted.
type accessLog struct {
	w      io.Writer
	logger *zap.Logger
	limit  int

	mu     sync.Mutex
	buf    []byte // lines waiting for the writer
	woken  bool   // the writer has been woken for buf
	closed bool

	wake    chan struct{} // a value when buf has grown past accessLogWake
	stop    chan struct{} // closed by close
	done    chan struct{} // closed when the writer has stopped
	dropped atomic.Uint64
	lines   sync.Pool // *logLine
}

// newAccessLog starts the writer of an access log to w; close stops it.
func newAccessLog(w io.Writer, limit int, logger *zap.Logger) *accessLog {
	a := &accessLog{w: w, logger: logger, limit: limit,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go a.run()
	return a
}

// push queues a finished line, or drops it when the writer is behind.
func (a *accessLog) push(line []byte) {
	a.mu.Lock()
	if a.closed || len(a.buf)+len(line) > a.limit {
		a.mu.Unlock()
		a.dropped.Add(1)
		return
	}
	a.buf = append(a.buf, line...)
	wake := !a.woken && len(a.buf) >= accessLogWake
	if wake {
		a.woken = true
	}
	a.mu.Unlock()
	if wake {
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
}

// run is the writer: it writes what is queued at each tick or when
// woken, and once more when the log closes.
func (a *accessLog) run() {
	defer close(a.done)
	t := time.NewTicker(accessLogFlush)
	defer t.Stop()
	var out []byte
	failing := false
	for {
		stopping := false
		select {
		case <-a.wake:
		case <-t.C:
		case <-a.stop:
			stopping = true
		}
		a.mu.Lock()
		out, a.buf = a.buf, out[:0]
		a.woken = false
		a.mu.Unlock()
		if len(out) > 0 {
			n, err := a.w.Write(out)
			switch {
			case err != nil:
				if n < 0 || n > len(out) {
					n = 0
				}
				a.dropped.Add(uint64(bytes.Count(out[n:], newline)))
				if !failing {
					a.logger.Warn("gateway: writing the access log failed; its lines are dropped until a write succeeds", zap.Error(err))
				}
				failing = true
			case failing:
				a.logger.Info("gateway: the access log is written again")
				failing = false
			}
		}
		if stopping {
			return
		}
	}
}

var newline = []byte{'\n'}

// close stops taking lines, writes those queued, and stops the writer.
func (a *accessLog) close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	close(a.stop)
	<-a.done
}

// get returns a line from the pool.
func (a *accessLog) get() *logLine {
	l, _ := a.lines.Get().(*logLine)
	if l == nil {
		l = new(logLine)
	}
	l.log, l.pooled = a, true
	l.remote, l.noClientID = nil, false
	return l
}

// logLine is an access log line being made: its request part is written
// when the request comes, before the gateway changes it, and the rest
// once it has been answered.
type logLine struct {
	b      []byte
	log    *accessLog
	begun  time.Time
	pooled bool // from the log's pool, and back there once pushed
	// client is the client's X-Request-Id, its first
	// routing.MaxRequestIDLen bytes (cut: it had more), for
	// client_request_id when the instance got another.
	client []byte
	cut    bool
	// remote is the client's address as the line has it (appendRemote)
	// when the caller keeps it for the client's connection (the loops),
	// nil when the line formats it.
	remote []byte
	// noClientID says the request has no X-Request-Id, when the caller
	// knows it (the loops' header scan): the line does not look for one.
	noClientID bool
}

// request starts the line with the request as the client sent it.
func (l *logLine) request(h *fasthttp.RequestHeader, remote net.Addr) {
	if cap(l.b) < lineRoom+512 {
		l.b = make([]byte, 0, 1024)
	}
	b := append(l.b[:lineRoom], `"request":{`...)
	if l.remote != nil {
		b = append(b, l.remote...)
	} else {
		b = appendRemote(b, remote)
	}
	b = appendJSONBytes(append(b, `,"proto":`...), h.Protocol())
	b = appendJSONBytes(append(b, `,"method":`...), h.Method())
	b = appendJSONBytes(append(b, `,"host":`...), h.Host())
	b = appendJSONBytes(append(b, `,"uri":`...), h.RequestURI())
	var id []byte
	if !l.noClientID {
		id = h.PeekBytes(headerRequestID)
	}
	l.cut = len(id) > routing.MaxRequestIDLen
	l.client = append(l.client[:0], id[:min(len(id), routing.MaxRequestIDLen)]...)
	if ua := h.UserAgent(); len(ua) > 0 {
		b = append(appendJSONBytes(append(b, `,"headers":{"User-Agent":[`...), ua), "]}"...)
	}
	l.b = append(b, '}')
}

// appendRemote appends the line's fields of the client's address.
func appendRemote(b []byte, remote net.Addr) []byte {
	b = append(b, `"remote_ip":`...)
	if a, ok := remote.(*net.TCPAddr); ok {
		b = append(b, '"')
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			b = ip.Unmap().AppendTo(b)
		}
		b = append(b, `","remote_port":"`...)
		b = strconv.AppendInt(b, int64(a.Port), 10)
		return append(b, '"')
	}
	var addr string
	if remote != nil {
		addr = remote.String()
	}
	return append(appendJSONString(b, addr), `,"remote_port":""`...)
}

// response adds what the gateway did with the request, and the status
// the client got: requestID is the X-Request-Id the instance got (nil
// when none did); the client's, when it sent another, is
// client_request_id, cut to routing.MaxRequestIDLen bytes.
func (l *logLine) response(app, subset, region, instance string, retries int, requestID []byte, status int) {
	b := appendJSONBytes(append(l.b, `,"request_id":`...), requestID)
	if len(l.client) > 0 && !l.sameID(requestID) {
		b = appendJSONBytes(append(b, `,"client_request_id":`...), l.client)
	}
	b = appendJSONString(append(b, `,"app":`...), app)
	if subset != "" {
		b = appendJSONString(append(b, `,"subset":`...), subset)
	}
	if region != "" {
		b = appendJSONString(append(b, `,"region":`...), region)
	}
	b = appendJSONString(append(b, `,"instance":`...), instance)
	b = strconv.AppendInt(append(b, `,"retries":`...), int64(retries), 10)
	l.b = strconv.AppendInt(append(b, `,"status":`...), int64(status), 10)
}

// sameID reports whether id is the client's X-Request-Id, as kept.
func (l *logLine) sameID(id []byte) bool {
	if l.cut {
		return len(id) > len(l.client) && bytes.HasPrefix(id, l.client)
	}
	return bytes.Equal(id, l.client)
}

// finish ends the line once the client has been sent size bytes of body,
// and queues it.
func (l *logLine) finish(size int64) { l.finishAt(size, time.Now()) }

// finishAt is finish at end.
func (l *logLine) finishAt(size int64, end time.Time) {
	b := strconv.AppendInt(append(l.b, `,"size":`...), size, 10)
	b = appendSeconds(append(b, `,"duration":`...), int64(end.Sub(l.begun)))
	b = append(b, "}\n"...)
	var ts [32]byte
	t := appendSeconds(ts[:0], end.UnixNano())
	start := lineRoom - len(lineLevel) - len(t) - len(lineLogger)
	head := b[start:lineRoom]
	n := copy(head, lineLevel)
	n += copy(head[n:], t)
	copy(head[n:], lineLogger)
	l.b = b
	l.log.push(b[start:])
	if l.pooled {
		l.pooled = false
		if cap(b) <= maxPooledLine {
			l.log.lines.Put(l)
		}
	}
}

// detached returns the line to finish after the exchange that owns its
// buffer is recycled: itself when it is the pool's, else a copy.
func (l *logLine) detached() *logLine {
	if l.pooled {
		return l
	}
	c := l.log.get()
	c.b = append(c.b[:0], l.b...)
	c.begun = l.begun
	return c
}

// loggedBody passes a response body that streams on the fasthttp path,
// counting it, and ends its line when fasthttp closes it, once the body
// has gone to the client (or failed to).
type loggedBody struct {
	body *upstreamBody
	line *logLine
	n    int64
}

func (b *loggedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.n += int64(n)
	return n, err
}

// CloseWithError closes the instance's body, and logs.
func (b *loggedBody) CloseWithError(err error) error {
	cerr := b.body.CloseWithError(err)
	if b.line != nil {
		b.line.finish(b.n)
		b.line = nil
	}
	return cerr
}

// logStream has line end when the body of resp, which streams, has gone
// to the client.
func logStream(resp *fasthttp.Response, line *logLine) {
	body, ok := resp.BodyStream().(*upstreamBody)
	if !ok {
		line.finish(int64(max(0, resp.Header.ContentLength())))
		return
	}
	// SetBodyStream closes the body it replaces, which would hand the
	// instance's connection back (or close it) before the body is read:
	// without its release, closing it does nothing.
	release := body.release
	body.release = nil
	resp.SetBodyStream(&loggedBody{body: body, line: line}, resp.Header.ContentLength())
	body.release = release
}
