package caddymodule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/goleak"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// recordingWriter is a log writer that keeps each Write it gets apart.
type recordingWriter struct {
	mu     sync.Mutex
	writes []string
	closed bool
}

func (r *recordingWriter) String() string    { return "recording" }
func (r *recordingWriter) WriterKey() string { return fmt.Sprintf("recording:%p", r) }
func (r *recordingWriter) OpenWriter() (io.WriteCloser, error) {
	return r, nil
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

func (r *recordingWriter) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return nil
}

func (r *recordingWriter) got() ([]string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.writes...), r.closed
}

// manualTimer stands for time.AfterFunc: the test fires what was armed.
type manualTimer struct {
	mu    sync.Mutex
	armed []func()
}

func (m *manualTimer) after(_ time.Duration, f func()) func() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.armed = append(m.armed, f)
	return func() bool { return true }
}

// fire runs the timers armed so far and returns how many there were.
func (m *manualTimer) fire() int {
	m.mu.Lock()
	fs := m.armed
	m.armed = nil
	m.mu.Unlock()
	for _, f := range fs {
		f()
	}
	return len(fs)
}

// openBuffered provisions b's hold as Provision does (b.wrapped set by
// the test) and opens it as Caddy does.
func openBuffered(t *testing.T, b *BufferedWriter) io.WriteCloser {
	t.Helper()
	b.hold()
	w, err := b.OpenWriter()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// The writer hands entries to the one it wraps in chunks: none until the
// buffer would overflow or the timer fires, never an entry split across
// two writes, an entry as long as the buffer at once, the rest when it
// is closed (which closes the wrapped writer); no goroutine is left.
func TestBufferedWriterWritesInChunks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	under := new(recordingWriter)
	timer := new(manualTimer)
	b := &BufferedWriter{Size: 64, wrapped: under, after: timer.after}
	w := openBuffered(t, b)
	line := func(n int) string { return fmt.Sprintf("entry %02d %s\n", n, strings.Repeat("x", 10)) } // 20 bytes
	for n := range 3 {
		w.Write([]byte(line(n)))
	}
	if got, _ := under.got(); len(got) != 0 {
		t.Fatalf("written before the buffer filled or the timer fired: %q", got)
	}
	w.Write([]byte(line(3))) // 80 bytes would not fit in 64: the three go first
	if got, _ := under.got(); len(got) != 1 || got[0] != line(0)+line(1)+line(2) {
		t.Fatalf("on overflow: %q, want the three entries before it in one write", got)
	}
	if n := timer.fire(); n != 1 {
		t.Fatalf("%d timers armed, want 1 (at the first entry into an empty buffer)", n)
	}
	if got, _ := under.got(); len(got) != 2 || got[1] != line(3) {
		t.Fatalf("after the timer: %q", got)
	}
	long := strings.Repeat("y", 70) + "\n"
	w.Write([]byte(line(4)))
	w.Write([]byte(long))
	if got, _ := under.got(); len(got) != 4 || got[2] != line(4) || got[3] != long {
		t.Fatalf("an entry longer than the buffer: %q, want the buffer then the entry", got)
	}
	w.Write([]byte(line(5)))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, closed := under.got()
	if len(got) != 5 || got[4] != line(5) || !closed {
		t.Fatalf("after the close: %q, closed %v", got, closed)
	}
	if _, err := w.Write([]byte(line(6))); err == nil {
		t.Error("a write after the close was taken")
	}
}

// The last config to let go of the log writes what it holds, without
// waiting for the timer (Caddy keeps the writer open, for the next config
// or until the process exits), and the entries after it go straight
// through; a config that lets go while another holds it writes nothing.
func TestBufferedWriterCleanupWrites(t *testing.T) {
	under := new(recordingWriter)
	timer := new(manualTimer)
	b := &BufferedWriter{wrapped: under, after: timer.after}
	w := openBuffered(t, b)
	defer w.Close()
	next := &BufferedWriter{wrapped: under, after: timer.after} // a reload that keeps the log
	next.hold()
	w.Write([]byte("one\n"))
	if err := b.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if got, _ := under.got(); len(got) != 0 {
		t.Fatalf("written when a config let go while the next one holds the log: %q", got)
	}
	if err := next.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if got, closed := under.got(); len(got) != 1 || got[0] != "one\n" || closed {
		t.Fatalf("after the last Cleanup: %q, closed %v; want the entry written, the writer open", got, closed)
	}
	w.Write([]byte("two\n")) // Caddy's lines after its stop, before the process exits
	if got, _ := under.got(); len(got) != 2 || got[1] != "two\n" {
		t.Fatalf("an entry after the last Cleanup: %q, want it written at once", got)
	}
}

// Through Caddy, as users configure it: an access log buffered for an
// hour holds its entries until the config that has it is replaced, and
// then they are all in the file.
func TestBufferedAccessLogInCaddy(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "access.log")
	body := fmt.Sprintf("\tlog {\n\t\toutput eureka_buffered {\n\t\t\tflush_interval 1h\n\t\t\toutput file %s\n\t\t}\n\t}\n\trespond ok", file)
	loadConfig(t, testConfig("", "registry "+newRegistry("buffered-log"), site(gatewayPort, body)))
	const requests = 5
	for range requests {
		resp, err := http.Get(gatewayURL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if data, _ := os.ReadFile(file); len(data) != 0 {
		t.Fatalf("entries written before the flush interval: %q", data)
	}
	loadConfig(t, testConfig("", "registry "+newRegistry("buffered-log"), site(gatewayPort, "\trespond ok")))
	// Caddy closes the old config's logs after the new config runs.
	var data []byte
	testkit.Eventually(t, 5*time.Second, "the buffered entries written when the config went", func() bool {
		data, _ = os.ReadFile(file)
		return len(data) > 0
	})
	// loadConfig's probes of "/" are logged too.
	xs := 0
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var entry struct {
			Msg     string `json:"msg"`
			Status  int    `json:"status"`
			Request struct {
				URI string `json:"uri"`
			} `json:"request"`
		}
		if err := json.Unmarshal([]byte(l), &entry); err != nil || entry.Msg != "handled request" || entry.Status != 200 {
			t.Errorf("not a whole access log entry (%v): %q", err, l)
		}
		if entry.Request.URI == "/x" {
			xs++
		}
	}
	if xs != requests {
		t.Errorf("%d entries of /x in the file after the config went, want %d:\n%s", xs, requests, data)
	}
}

// The writer's JSON options are checked when the config is provisioned.
func TestBufferedWriterConfigErrors(t *testing.T) {
	for _, c := range []struct{ writer, want string }{
		{`{"output": "eureka_buffered"}`, "eureka_buffered: writer: required"},
		{`{"output": "eureka_buffered", "writer": {"output": "discard"}, "size": 67108865}`, "eureka_buffered: size: 67108865 bytes is outside 1 byte to 64 MiB"},
		{`{"output": "eureka_buffered", "writer": {"output": "discard"}, "size": -1}`, "eureka_buffered: size: -1 bytes"},
		{`{"output": "eureka_buffered", "writer": {"output": "discard"}, "flush_interval": 1000}`, "eureka_buffered: flush_interval: 1µs is below 1ms"},
		{`{"output": "eureka_buffered", "writer": {"output": "nowhere"}}`, "eureka_buffered: writer: "},
	} {
		cfg := &caddy.Config{Admin: &caddy.AdminConfig{Disabled: true}, Logging: &caddy.Logging{Logs: map[string]*caddy.CustomLog{
			"buffered": {BaseLog: caddy.BaseLog{WriterRaw: json.RawMessage(c.writer)}},
		}}}
		err := caddy.Validate(cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.writer, err, c.want)
		}
	}
}

// The Caddyfile's eureka_buffered block: its options, the wrapped
// writer's own block, and plain one-line refusals.
func TestBufferedWriterCaddyfile(t *testing.T) {
	site := func(output string) string {
		return "http://:1 {\n\tlog {\n\t\toutput eureka_buffered {\n" + output + "\t\t}\n\t}\n\trespond ok\n}\n"
	}
	_, out := adaptApp(t, site("\t\t\tsize 1MiB\n\t\t\tflush_interval 250ms\n\t\t\toutput file access.log {\n\t\t\t\troll_keep 3\n\t\t\t}\n"))
	var cfg struct {
		Logging struct {
			Logs map[string]struct {
				Writer struct {
					Output        string          `json:"output"`
					Size          int             `json:"size"`
					FlushInterval caddy.Duration  `json:"flush_interval"`
					Writer        json.RawMessage `json:"writer"`
				} `json:"writer"`
			} `json:"logs"`
		} `json:"logging"`
	}
	if err := json.Unmarshal([]byte(out), &cfg); err != nil {
		t.Fatal(err)
	}
	w := cfg.Logging.Logs["log0"].Writer
	var wrapped bytes.Buffer
	json.Compact(&wrapped, w.Writer)
	if w.Output != "eureka_buffered" || w.Size != 1<<20 || time.Duration(w.FlushInterval) != 250*time.Millisecond ||
		wrapped.String() != `{"filename":"access.log","output":"file","roll_keep":3}` {
		t.Errorf("adapted writer: %+v %s\n%s", w, wrapped.String(), out)
	}
	_, out = adaptApp(t, site("\t\t\toutput stdout\n"))
	var compact bytes.Buffer
	json.Compact(&compact, []byte(out))
	if !strings.Contains(compact.String(), `"writer":{"output":"stdout"}`) {
		t.Errorf("output stdout adapted to\n%s", out)
	}
	expectCaddyfileErrors(t, []caddyfileError{
		{name: "no output", caddyfile: site("\t\t\tsize 1KiB\n"), want: []string{"eureka_buffered: output is required"}},
		{name: "output twice", caddyfile: site("\t\t\toutput stdout\n\t\t\toutput stderr\n"), want: []string{"output given twice"}},
		{name: "size not a size", caddyfile: site("\t\t\tsize lots\n\t\t\toutput stdout\n"), want: []string{`size "lots" is not a size`}},
		{name: "size too big", caddyfile: site("\t\t\tsize 1GiB\n\t\t\toutput stdout\n"), want: []string{`size "1GiB" is above 64MiB`}},
		{name: "unknown option", caddyfile: site("\t\t\tbuffer 1KiB\n\t\t\toutput stdout\n"), want: []string{`no option "buffer"`}},
		{name: "stdout with an argument", caddyfile: site("\t\t\toutput stdout now\n"), want: []string{"output stdout takes no arguments and no block"}},
		{name: "stdout with a block", caddyfile: site("\t\t\toutput stdout {\n\t\t\t\tx\n\t\t\t}\n"), want: []string{"output stdout takes no arguments and no block"}},
		{name: "flush_interval below 1ms", caddyfile: site("\t\t\tflush_interval 500us\n\t\t\toutput stdout\n"), want: []string{"flush_interval 500µs is below 1ms"}},
		{name: "unknown writer", caddyfile: site("\t\t\toutput nowhere\n"), want: []string{"caddy.logging.writers.nowhere"}},
	})
}

// failingWriter fails every write.
type failingWriter struct{ recordingWriter }

func (f *failingWriter) Write([]byte) (int, error)           { return 0, errors.New("disk full") }
func (f *failingWriter) OpenWriter() (io.WriteCloser, error) { return f, nil }
func (f *failingWriter) WriterKey() string                   { return fmt.Sprintf("failing:%p", f) }

// A write of the buffer that fails, the timer's or one that makes room,
// is reported on the error output (the log may be the one failing) and
// drops that chunk alone: the entry that made room and those after it
// are taken and written as usual.
func TestBufferedWriterReportsAFailedFlush(t *testing.T) {
	var errOut bytes.Buffer
	under := new(failingWriter)
	timer := new(manualTimer)
	b := &BufferedWriter{Size: 8, wrapped: under, after: timer.after, errOut: &errOut}
	w := openBuffered(t, b)
	defer w.Close()
	w.Write([]byte("one\n"))
	timer.fire()
	if !strings.Contains(errOut.String(), "eureka_buffered: writing the log's entries: disk full") {
		t.Fatalf("error output %q", errOut.String())
	}
	if n, err := w.Write([]byte("two\n")); n != 4 || err != nil {
		t.Fatalf("the entry after a failed write: %d, %v", n, err)
	}
	if timer.fire() != 1 {
		t.Error("no timer armed for the entry after a failed write")
	}
	errOut.Reset()
	w.Write([]byte("three\n"))
	if n, err := w.Write([]byte("four\n")); n != 5 || err != nil || !strings.Contains(errOut.String(), "disk full") {
		t.Fatalf("the entry whose room a failed write made: %d, %v; error output %q", n, err, errOut.String())
	}
}

// A timer's tick that arrives after its timer was disarmed (the last
// config let go of the log meanwhile) leaves the newer timer armed: the
// entries after it still have one, and Close stops it.
func TestBufferedWriterLateTickLeavesTheNewerTimer(t *testing.T) {
	under, timer := new(recordingWriter), new(manualTimer)
	b := &BufferedWriter{wrapped: under, after: timer.after}
	w := openBuffered(t, b)
	defer w.Close()
	w.Write([]byte("one\n")) // arms timer 1
	timer.mu.Lock()
	late := timer.armed[0] // fired, its tick on its way
	timer.armed = nil
	timer.mu.Unlock()
	b.Cleanup() // the last hold: "one" written, timer 1 disarmed
	next := &BufferedWriter{wrapped: under, after: timer.after}
	next.hold() // a config with the log again
	defer next.Cleanup()
	w.Write([]byte("two\n")) // arms timer 2
	late()
	w.Write([]byte("three\n"))
	if n := timer.fire(); n != 1 {
		t.Fatalf("%d timers armed, want timer 2 alone (a late tick of timer 1 left it unstoppable, and a third was armed)", n)
	}
	if got, _ := under.got(); strings.Join(got, "") != "one\ntwo\nthree\n" {
		t.Fatalf("written %q", got)
	}
}

// A config that loads the log with another size takes over the buffer
// without losing what it held: it is written first.
func TestBufferedWriterResizeKeepsEntries(t *testing.T) {
	under, timer := new(recordingWriter), new(manualTimer)
	b := &BufferedWriter{Size: 64, wrapped: under, after: timer.after}
	w := openBuffered(t, b)
	defer w.Close()
	w.Write([]byte("one\n"))
	next := &BufferedWriter{Size: 128, wrapped: under, after: timer.after}
	next.hold()
	defer next.Cleanup()
	b.Cleanup()
	w.Write([]byte("two\n"))
	timer.fire()
	if got, _ := under.got(); strings.Join(got, "") != "one\ntwo\n" {
		t.Fatalf("written %q, want both entries", got)
	}
}
