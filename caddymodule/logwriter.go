package caddymodule

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// The defaults and bounds of eureka_buffered.
const (
	// DefaultLogBufferSize is BufferedWriter.Size when unset: nginx's
	// access_log buffer=64k.
	DefaultLogBufferSize = 64 << 10
	// DefaultLogFlushInterval is BufferedWriter.FlushInterval when unset:
	// a line reaches the writer within a second, as the fasthttp
	// gateway's access log does.
	DefaultLogFlushInterval = time.Second
	// maxLogBufferSize bounds size: the buffer is allocated whole.
	maxLogBufferSize = 64 << 20
	// minLogFlushInterval bounds flush_interval: a shorter tick would
	// write about as often as no buffer does.
	minLogFlushInterval = time.Millisecond
)

func init() { caddy.RegisterModule(new(BufferedWriter)) }

// BufferedWriter is the log writer eureka_buffered: it keeps a log's
// entries in memory and hands them to the writer it wraps in chunks of
// up to Size bytes, at least every FlushInterval, as nginx's access_log
// buffer= does. Caddy's own writers write each entry with a system call
// of its own, which for an access log is one more per request; this one
// writes one per chunk. An entry is never split across two writes. The
// entries still in memory are written when Caddy stops or a config that
// no longer has the log replaces this one; those of a process killed
// (SIGKILL, a crash) are lost, at most a FlushInterval's worth.
type BufferedWriter struct {
	// The writer the entries go to, any of Caddy's log writer modules
	// (file, net, stdout, ...). Required.
	WriterRaw json.RawMessage `json:"writer,omitempty" caddy:"namespace=caddy.logging.writers inline_key=output"`

	// The bytes of entries kept before they are written: at most 64 MiB.
	// Default: 64 KiB.
	Size int `json:"size,omitempty"`

	// The longest an entry waits before it is written: at least 1ms.
	// Default: 1s.
	FlushInterval caddy.Duration `json:"flush_interval,omitempty"`

	wrapped caddy.WriterOpener
	// after arms a timer (nil: time.AfterFunc), errOut takes a timer's
	// failed write (nil: the standard error); tests set them.
	after  func(time.Duration, func()) (stop func() bool)
	errOut io.Writer
}

// CaddyModule returns the Caddy module information.
func (*BufferedWriter) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "caddy.logging.writers.eureka_buffered", New: func() caddy.Module { return new(BufferedWriter) }}
}

// Provision loads the wrapped writer and checks the bounds.
func (b *BufferedWriter) Provision(ctx caddy.Context) error {
	if b.WriterRaw == nil {
		return fmt.Errorf("eureka_buffered: writer: required, the writer the entries go to, such as {\"output\": \"file\", \"filename\": \"access.log\"}")
	}
	if b.Size < 0 || b.Size > maxLogBufferSize {
		return fmt.Errorf("eureka_buffered: size: %d bytes is outside 1 byte to 64 MiB", b.Size)
	}
	if b.FlushInterval < 0 || b.FlushInterval > 0 && time.Duration(b.FlushInterval) < minLogFlushInterval {
		return fmt.Errorf("eureka_buffered: flush_interval: %v is below 1ms", time.Duration(b.FlushInterval))
	}
	mod, err := ctx.LoadModule(b, "WriterRaw")
	if err != nil {
		return fmt.Errorf("eureka_buffered: writer: %v", err)
	}
	b.wrapped = mod.(caddy.WriterOpener)
	return nil
}

func (b *BufferedWriter) size() int {
	if b.Size == 0 {
		return DefaultLogBufferSize
	}
	return b.Size
}

func (b *BufferedWriter) flushInterval() time.Duration {
	if b.FlushInterval == 0 {
		return DefaultLogFlushInterval
	}
	return time.Duration(b.FlushInterval)
}

// String names the writer to humans.
func (b *BufferedWriter) String() string { return "buffered " + b.wrapped.String() }

// WriterKey is the wrapped writer's key with the buffer's settings:
// Caddy keeps one writer per key across config reloads.
func (b *BufferedWriter) WriterKey() string {
	return fmt.Sprintf("eureka_buffered:%d:%v:%s", b.size(), b.flushInterval(), b.wrapped.WriterKey())
}

// OpenWriter opens the wrapped writer and buffers in front of it.
func (b *BufferedWriter) OpenWriter() (io.WriteCloser, error) {
	w, err := b.wrapped.OpenWriter()
	if err != nil {
		return nil, err
	}
	l := &bufferedLog{key: b.WriterKey(), under: w, size: b.size(), interval: b.flushInterval(), after: b.after, errOut: b.errOut}
	if l.after == nil {
		l.after = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	if l.errOut == nil {
		l.errOut = os.Stderr
	}
	bufferedLogs.Lock()
	bufferedLogs.open[l.key] = l
	bufferedLogs.Unlock()
	return l, nil
}

// Cleanup writes what the config's log holds when the config stops.
// Caddy keeps a log writer open by its key for the configs after (it
// does not close it when a config stops), so without this a reload
// that drops the log, or Caddy's stop, after which the process exits,
// would leave the last entries in memory.
func (b *BufferedWriter) Cleanup() error {
	if b.wrapped == nil {
		return nil // not provisioned
	}
	bufferedLogs.Lock()
	l := bufferedLogs.open[b.WriterKey()]
	bufferedLogs.Unlock()
	if l == nil {
		return nil
	}
	return l.Sync()
}

// bufferedLogs are the open eureka_buffered writers, by key, for their
// configs' Cleanup.
var bufferedLogs = struct {
	sync.Mutex
	open map[string]*bufferedLog
}{open: map[string]*bufferedLog{}}

// bufferedLog is an open eureka_buffered writer. It has no goroutine of
// its own: a timer, armed by the first entry into an empty buffer, writes
// the buffer when FlushInterval has passed, so an idle log costs nothing.
type bufferedLog struct {
	key      string
	under    io.WriteCloser
	size     int
	interval time.Duration
	after    func(time.Duration, func()) (stop func() bool)
	errOut   io.Writer // where a tick's failed write is reported

	mu     sync.Mutex
	buf    []byte
	stop   func() bool // the armed timer's; nil when none is
	closed bool
}

// Write buffers an entry, writing the buffer first if the entry does
// not fit, so that no entry is split across two writes; an entry as
// long as the buffer is written at once.
func (l *bufferedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, os.ErrClosed
	}
	if len(l.buf)+len(p) > l.size {
		if err := l.flushLocked(); err != nil {
			return 0, err
		}
	}
	if len(p) >= l.size {
		return l.under.Write(p)
	}
	if l.buf == nil {
		l.buf = make([]byte, 0, l.size)
	}
	l.buf = append(l.buf, p...)
	if l.stop == nil {
		l.stop = l.after(l.interval, l.tick)
	}
	return len(p), nil
}

// tick is the timer's: the oldest entry has waited FlushInterval. A
// failed write goes to the standard error, as zap reports the writes
// of Caddy's writers that fail (not to a log, which may be this one).
func (l *bufferedLog) tick() {
	l.mu.Lock()
	l.stop = nil
	err := l.flushLocked()
	l.mu.Unlock()
	if err != nil {
		fmt.Fprintf(l.errOut, "%s eureka_buffered: writing the log's entries: %v\n", time.Now().UTC().Format(time.RFC3339), err)
	}
}

// flushLocked writes the buffer to the wrapped writer. What a failed
// write held is dropped (the wrapped writer said why), so that one
// failure does not fail every entry after it.
func (l *bufferedLog) flushLocked() error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.under.Write(l.buf)
	l.buf = l.buf[:0]
	return err
}

// Sync writes what is buffered: zap calls it after a fatal entry, and
// Cleanup when a config stops.
func (l *bufferedLog) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		l.stop()
		l.stop = nil
	}
	return l.flushLocked()
}

// Close writes what is buffered and closes the wrapped writer.
func (l *bufferedLog) Close() error {
	err := l.Sync()
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	bufferedLogs.Lock()
	if bufferedLogs.open[l.key] == l {
		delete(bufferedLogs.open, l.key)
	}
	bufferedLogs.Unlock()
	if cerr := l.under.Close(); err == nil {
		err = cerr
	}
	return err
}

// Interface guards
var (
	_ caddy.Provisioner  = (*BufferedWriter)(nil)
	_ caddy.CleanerUpper = (*BufferedWriter)(nil)
	_ caddy.WriterOpener = (*BufferedWriter)(nil)
)
