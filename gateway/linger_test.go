package gateway

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// An answer given with more of the request body to come than is dropped
// before the next request (a 413, a 503 for an app without instances, a
// 404 for no app, a 400): it says the connection closes, and the
// connection then reads what the client still sends, so that a client
// writing its whole body before it reads gets its answer, and then the
// end of the connection, not a reset. A connection closed at once with 32
// MiB unread is reset. The access log has each answer's status and size;
// a HEAD's answer has no body. In both modes, by length and chunked.
func TestUnreadBodyLingers(t *testing.T) {
	const size = 32 << 20
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := filesStore(t)
			var log logBuffer
			base, g, _ := startServer(t, Config{MaxRequestBodySize: 100 << 10, AccessLog: &log}, ServerConfig{Loops: m.loops}, store)
			cases := []struct {
				method, path string
				chunked      bool
				want         int
			}{
				{"POST", "/files/x", false, 413},
				{"POST", "/files/x", true, 413},
				{"HEAD", "/files/x", false, 413},
				{"POST", "/nosuch/x", false, 503},
				{"POST", "/", true, 404},
				{"POST", "/files/x#fragment", false, 400},
			}
			for _, c := range cases {
				raw := dialRaw(t, base)
				head := requestHead(c.method+" "+c.path+" HTTP/1.1", "", c.chunked, size)
				if err := writeBody(raw.conn, head, size); err != nil {
					t.Fatalf("%q: writing the body: %v", head, err)
				}
				if resp, _ := raw.read(c.method); resp.StatusCode != c.want || !resp.Close {
					t.Fatalf("%q: %d, close %v; want %d and close", head, resp.StatusCode, resp.Close, c.want)
				}
				if n := g.hijacked.count(); n != 1 { // the body was not read before the answer
					t.Errorf("%q: %d connections linger, want 1", head, n)
				}
				if _, err := raw.br.ReadByte(); err != io.EOF {
					t.Errorf("%q: after the answer %v, want the end of the connection", head, err)
				}
				raw.conn.Close()
				testkit.Eventually(t, 5*time.Second, "the lingering close to end", func() bool { return g.hijacked.count() == 0 })
			}
			lines := log.waitLines(t, len(cases), 5*time.Second)
			for k, c := range cases {
				if l := lines[k]; l.Status != c.want || (l.Size == 0) != (c.method == "HEAD") {
					t.Errorf("%s %s: logged %d, %d bytes", c.method, c.path, l.Status, l.Size)
				}
			}
		})
	}
}

// A rest short enough to drop still lingers when the connection closes
// anyway: the client asked for it (Connection: close, HTTP/1.0) or the
// answer says so (a 400). And an answer other than a 413 does not wait
// for a chunked body: the client reads it mid-body. Each client writes
// the rest of its body after it has read the answer, which a connection
// closed at once answers with a reset. In both modes.
func TestUnreadRestLingersWhenClosing(t *testing.T) {
	const size = 200 << 10
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := filesStore(t)
			base, _, _ := startServer(t, Config{}, ServerConfig{Loops: m.loops}, store)
			cases := []struct {
				line, fields string
				chunked      bool
				want         int
			}{
				{"POST /nosuch/x HTTP/1.1", "Connection: close\r\n", false, 503},
				{"POST /nosuch/x HTTP/1.0", "", false, 503},
				{"POST /files/x#fragment HTTP/1.1", "", false, 400},
				{"POST /nosuch/x HTTP/1.1", "", true, 503},
			}
			for _, c := range cases {
				raw := dialRaw(t, base)
				head := requestHead(c.line, c.fields, c.chunked, size)
				first := strings.Repeat("x", 16<<10)
				raw.send(head + first)
				if resp, _ := raw.read("POST"); resp.StatusCode != c.want || !resp.Close {
					t.Fatalf("%q: %d, close %v; want %d and close", head, resp.StatusCode, resp.Close, c.want)
				}
				if err := writeBody(raw.conn, "", size-len(first)); err != nil {
					t.Errorf("%q: writing the rest after the answer: %v", head, err)
				}
			}
		})
	}
}

// A short rest that has come is dropped, whatever the answer and the
// framing, and the connection carries the next request, however slowly
// its header comes; under an answer that closes the connection it closes
// without lingering. In both modes.
func TestShortRestKeepsConnection(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := registry.New(registry.Config{})
			serve(t, store, "files", "a", named("a"))
			other := func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("other") } // reads no body
			base, g, _ := startServer(t, Config{Other: other}, ServerConfig{Loops: m.loops}, store)
			next := "GET /files/y HTTP/1.1\r\nHost: gw\r\n\r\n"
			long := strings.Repeat("x", 150<<10)
			for _, c := range []struct {
				req  string
				want int
			}{
				{"POST /nosuch/x HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n", 503},
				{fmt.Sprintf("POST /nosuch/x HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(long), long), 503},
				{"POST / HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 200},
				{fmt.Sprintf("POST / HTTP/1.1\r\nHost: gw\r\nContent-Length: %d\r\n\r\n%s", len(long), long), 200},
			} {
				raw := dialRaw(t, base)
				wrote := make(chan error, 1)
				go func() { wrote <- writeBody(raw.conn, c.req+next, 0) }()
				if resp, _ := raw.read("POST"); resp.StatusCode != c.want || resp.Close {
					t.Errorf("%.60q: %d, close %v; want %d on a kept connection", c.req, resp.StatusCode, resp.Close, c.want)
				} else if resp, got := raw.read("GET"); resp.StatusCode != 200 || got != "a" {
					t.Errorf("%.60q: the next request: %d %q", c.req, resp.StatusCode, got)
				}
				if err := <-wrote; err != nil {
					t.Errorf("%.60q: %v", c.req, err)
				}
			}

			// The wait for the rest does not bound the next request's
			// header, which comes in two pieces 50 ms apart.
			raw0 := dialRaw(t, base)
			raw0.send("POST /nosuch/x HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n")
			if resp, _ := raw0.read("POST"); resp.StatusCode != 503 || resp.Close {
				t.Fatalf("%d, close %v; want 503 on a kept connection", resp.StatusCode, resp.Close)
			}
			raw0.send("GET /files/y HTTP/1.1\r\n")
			time.Sleep(50 * time.Millisecond) // a slow client, past arrivedWait
			raw0.send("Host: gw\r\n\r\n")
			if resp, got := raw0.read("GET"); resp.StatusCode != 200 || got != "a" {
				t.Errorf("a slow next header: %d %q", resp.StatusCode, got)
			}

			// Under a 400 the rest that came is dropped and the connection
			// closes at once: nothing lingers.
			raw := dialRaw(t, base)
			raw.send("POST /files/x#fragment HTTP/1.1\r\nHost: gw\r\nContent-Length: 10\r\n\r\n0123456789")
			if resp, _ := raw.read("POST"); resp.StatusCode != 400 || !resp.Close {
				t.Fatalf("%d, close %v; want 400 and close", resp.StatusCode, resp.Close)
			}
			if n := g.hijacked.count(); n != 0 {
				t.Errorf("%d connections linger after a whole body", n)
			}
		})
	}
}

// filesStore is a registry with one instance of FILES, which reads and
// drops any body.
func filesStore(t *testing.T) *registry.Store {
	store := registry.New(registry.Config{})
	serve(t, store, "files", "a", func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) })
	return store
}

// requestHead is a request's line, fields and framing for a body of size
// bytes; a chunked one is a single chunk, its size line included.
func requestHead(line, fields string, chunked bool, size int) string {
	if chunked {
		return fmt.Sprintf("%s\r\nHost: gw\r\n%sTransfer-Encoding: chunked\r\n\r\n%x\r\n", line, fields, size)
	}
	return fmt.Sprintf("%s\r\nHost: gw\r\n%sContent-Length: %d\r\n\r\n", line, fields, size)
}

// writeBody writes head and size bytes of body to conn.
func writeBody(conn net.Conn, head string, size int) error {
	chunk := []byte(strings.Repeat("x", 16<<10))
	_, err := io.WriteString(conn, head)
	for n := 0; err == nil && n < size; n += len(chunk) {
		_, err = conn.Write(chunk[:min(len(chunk), size-n)])
	}
	return err
}

// An answer that streams may read the request body as it is written
// (Config.Other echoing it): it gets the whole body, at once, and the
// connection carries the next request. In both modes, by length and
// chunked.
func TestStreamedAnswerReadsUnreadBody(t *testing.T) {
	const size = 1 << 20
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := registry.New(registry.Config{})
			serve(t, store, "files", "a", named("a"))
			echo := func(ctx *fasthttp.RequestCtx) { ctx.SetBodyStream(ctx.RequestBodyStream(), -1) }
			base, _, _ := startServer(t, Config{Other: echo}, ServerConfig{Loops: m.loops}, store)
			for _, chunked := range []bool{false, true} {
				raw := dialRaw(t, base)
				body := strings.Repeat("e", size)
				if chunked {
					body += "\r\n0\r\n\r\n"
				}
				wrote := make(chan error, 1)
				go func() {
					wrote <- writeBody(raw.conn, requestHead("POST / HTTP/1.1", "", chunked, size)+body+"GET /files/y HTTP/1.1\r\nHost: gw\r\n\r\n", 0)
				}()
				if resp, got := raw.read("POST"); resp.StatusCode != 200 || len(got) != size {
					t.Errorf("chunked %v: %d, %d bytes echoed; want 200 and %d", chunked, resp.StatusCode, len(got), size)
				} else if resp, got := raw.read("GET"); resp.StatusCode != 200 || got != "a" {
					t.Errorf("chunked %v: the next request: %d %q", chunked, resp.StatusCode, got)
				}
				raw.conn.Close()
				<-wrote
			}
		})
	}
}

// Close ends a lingering close, which would otherwise last as long as the
// client goes on sending (lingerTime): it returns, and the client's next
// write fails. In both modes.
func TestCloseEndsLingeringClose(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := filesStore(t)
			base, g, _ := startServer(t, Config{MaxRequestBodySize: 100 << 10}, ServerConfig{Loops: m.loops}, store)
			raw := dialRaw(t, base)
			raw.conn.SetWriteDeadline(time.Time{})
			// More than fasthttp reads before the handler, then a trickle.
			raw.send(requestHead("POST /files/x HTTP/1.1", "", false, 1<<30) + strings.Repeat("x", 1<<20))
			stop := make(chan struct{})
			sent := make(chan error, 1)
			go func() { // a byte every 10 ms, well within lingerTimeout
				tick := time.NewTicker(10 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						sent <- nil
						return
					case <-tick.C:
						if _, err := raw.conn.Write([]byte("x")); err != nil {
							sent <- err
							return
						}
					}
				}
			}()
			defer close(stop)
			if resp, _ := raw.read("POST"); resp.StatusCode != 413 || !resp.Close {
				t.Fatalf("%d, close %v; want 413 and close", resp.StatusCode, resp.Close)
			}
			testkit.Eventually(t, 5*time.Second, "the connection to linger", func() bool { return g.hijacked.count() == 1 })
			closed := make(chan struct{})
			go func() { g.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				t.Fatal("Close did not end the lingering close")
			}
			select {
			case err := <-sent:
				if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
					t.Errorf("the client's write after Close: %v, want a reset", err)
				}
			case <-time.After(5 * time.Second):
				t.Error("the client still writes after Close")
			}
		})
	}
}
