package caddymodule

import (
	"encoding/json"
	"fmt"
	"io"
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
// writes one per chunk. An entry is never split across two writes.
//
// The configs that name the same wrapped writer share one buffer in
// front of it (the last config loaded sets its size and interval), as
// Caddy shares the wrapped writer itself. When no config has the log
// any more (a reload without it, Caddy's stop), what is buffered is
// written, and the entries after it, such as Caddy's last lines before
// it exits, are written at once. Entries are lost when the process is
// killed (SIGKILL, a crash: at most a FlushInterval's worth), and with
// them a panic or fatal entry, which zap cannot make this writer write
// at once through Caddy: buffer access logs, not Caddy's default log.
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
	log     *bufferedLog // the shared buffer this config holds; nil when none
	// after arms a timer (nil: time.AfterFunc), errOut takes the failed
	// writes of entries already taken (nil: the standard error); tests
	// set them.
	after  func(time.Duration, func()) (stop func() bool)
	errOut io.Writer
}

// CaddyModule returns the Caddy module information.
func (*BufferedWriter) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "caddy.logging.writers.eureka_buffered", New: func() caddy.Module { return new(BufferedWriter) }}
}

// Provision loads the wrapped writer, checks the bounds and takes a hold
// of the buffer in front of the wrapped writer.
func (b *BufferedWriter) Provision(ctx caddy.Context) error {
	if b.WriterRaw == nil {
		return fmt.Errorf("eureka_buffered: writer: required, the writer the entries go to, such as {\"output\": \"file\", \"filename\": \"access.log\"}")
	}
	if b.Size < 0 || b.Size > maxLogBufferSize {
		return fmt.Errorf("eureka_buffered: size: %d bytes is outside 1 byte to 64 MiB", b.Size)
	}
	if err := checkLogFlushInterval(time.Duration(b.FlushInterval)); err != nil {
		return fmt.Errorf("eureka_buffered: flush_interval: %v", err)
	}
	mod, err := ctx.LoadModule(b, "WriterRaw")
	if err != nil {
		return fmt.Errorf("eureka_buffered: writer: %v", err)
	}
	b.wrapped = mod.(caddy.WriterOpener)
	b.hold()
	return nil
}

// checkLogFlushInterval refuses a flush_interval below the bound (0 is
// the default).
func checkLogFlushInterval(d time.Duration) error {
	if d < 0 || d > 0 && d < minLogFlushInterval {
		return fmt.Errorf("%v is below 1ms", d)
	}
	return nil
}

// hold takes a hold of the buffer in front of the wrapped writer, with
// this config's settings.
func (b *BufferedWriter) hold() {
	size, interval := b.Size, time.Duration(b.FlushInterval)
	if size == 0 {
		size = DefaultLogBufferSize
	}
	if interval == 0 {
		interval = DefaultLogFlushInterval
	}
	b.log = bufferedLogs.hold(b.WriterKey(), size, interval, b.after, b.errOut)
}

// Cleanup lets go of the buffer when the config stops: the last config
// to let go writes what is buffered. Caddy does not close a log writer
// when a config stops (it keeps it open for the configs after), so this
// is where a buffered log is written before a reload drops it or the
// process exits.
func (b *BufferedWriter) Cleanup() error {
	if b.log == nil {
		return nil // not provisioned
	}
	l := b.log
	b.log = nil
	return l.release()
}

// String names the writer to humans.
func (b *BufferedWriter) String() string { return "buffered " + b.wrapped.String() }

// WriterKey is the wrapped writer's: Caddy keeps one writer per key
// across configs, and the buffer goes with the writer it is in front of.
func (b *BufferedWriter) WriterKey() string { return "eureka_buffered:" + b.wrapped.WriterKey() }

// OpenWriter opens the wrapped writer behind the buffer. Caddy calls it
// once per key, the first time a config names the writer.
func (b *BufferedWriter) OpenWriter() (io.WriteCloser, error) {
	w, err := b.wrapped.OpenWriter()
	if err != nil {
		return nil, err
	}
	b.log.attach(w)
	return b.log, nil
}

// Interface guards
var (
	_ caddy.Provisioner  = (*BufferedWriter)(nil)
	_ caddy.CleanerUpper = (*BufferedWriter)(nil)
	_ caddy.WriterOpener = (*BufferedWriter)(nil)
)
