package gateway

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/gatewaysuite"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/routing"
)

// echoBody answers with the method, path and body it got.
func echoBody(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	fmt.Fprintf(w, "%s %s %q", r.Method, r.URL.Path, b)
}

// Nothing rewrites the bytes of a body, nor shifts the next request: a
// pipelined body with blank lines, and an unread body (a 503 for an
// unknown app, drained by fasthttp) before the next request.
func TestBodiesAndTheNextRequestArriveIntact(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := registry.New(registry.Config{})
			serve(t, store, "echo", "a", echoBody)
			base, _, _ := startServer(t, Config{}, ServerConfig{Loops: m.loops}, store)
			c := dialRaw(t, base)
			c.send("GET /echo/1 HTTP/1.1\r\nHost: a\r\n\r\nPOST /echo/2 HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\n\r\n")
			time.Sleep(100 * time.Millisecond) // the body in a later read
			c.send("a\n\nb\r\n\nGET /echo/3 HTTP/1.1\r\nHost: a\r\n\r\n")
			for _, want := range []string{`GET /1 ""`, `POST /2 "a\n\nb\r\n\n"`, `GET /3 ""`} {
				if resp, body := c.read("GET"); resp.StatusCode != 200 || body != want {
					t.Fatalf("%d %q, want %q", resp.StatusCode, body, want)
				}
			}
			d := dialRaw(t, base)
			d.send("POST /nosuch/x HTTP/1.1\r\nHost: a\r\nContent-Length: 102400\r\n\r\n" + strings.Repeat("x", 102394) + "ab\n\nYZ" +
				"GET /echo/after HTTP/1.1\r\nHost: a\r\n\r\n")
			if resp, _ := d.read("POST"); resp.StatusCode != 503 {
				t.Fatalf("unknown app: %d", resp.StatusCode)
			}
			if resp, body := d.read("GET"); resp.StatusCode != 200 || body != `GET /after ""` {
				t.Fatalf("after an unread body: %d %q", resp.StatusCode, body)
			}
		})
	}
}

// HeaderTimeout starts anew with each request's first byte: after a
// drained body with blank lines in it, the next header trickled in is
// cut too; one sent at once after a long idle wait is not.
func TestHeaderTimeoutEachRequest(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			base := startHeaderLimited(t, m.loops, "echo", echoBody)
			c := dialRaw(t, base)
			c.send("GET /echo/1 HTTP/1.1\r\nHost: a\r\n\r\n")
			c.read("GET")
			time.Sleep(2 * headerLimit) // idle, within ReadTimeout: not the header's time
			c.send("GET /echo/2 HTTP/1.1\r\nHost: a\r\n\r\n")
			if resp, _ := c.read("GET"); resp.StatusCode != 200 {
				t.Fatalf("after an idle wait: %d", resp.StatusCode)
			}
			c.send("POST /nosuch/x HTTP/1.1\r\nHost: a\r\nContent-Length: 70000\r\n\r\n" + strings.Repeat("x", 69994) + "ab\n\nYZ")
			c.read("POST")
			stop := make(chan struct{})
			done := testkit.Trickle(c.conn, "GET /echo/3 HTTP/1.1\r\nHost: a\r\nX-Pad: "+strings.Repeat("p", 200), 10*time.Millisecond, stop)
			defer func() { close(stop); <-done }()
			began := time.Now()
			resp, _ := c.read("GET")
			if took := time.Since(began); resp.StatusCode != 408 || took > headerLimit+time.Second {
				t.Errorf("the header after a drained body: %d after %v, want 408 after about %v", resp.StatusCode, took, headerLimit)
			}
		})
	}
}

// A loop that answered 408 forwards nothing the client completes after.
func TestLoopsForwardNothingAfter408(t *testing.T) {
	store := registry.New(registry.Config{})
	got := make(chan string, 4)
	serve(t, store, "echo", "a", func(w http.ResponseWriter, r *http.Request) { got <- r.Method })
	base, _, _ := startServer(t, Config{}, ServerConfig{HeaderTimeout: 300 * time.Millisecond}, store)
	c := dialRaw(t, base)
	c.send("DELETE /echo/x HTTP/1.1\r\nHost: a\r\n")
	if resp, _ := c.read("DELETE"); resp.StatusCode != 408 {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
	c.conn.Write([]byte("\r\n"))
	c.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	io.Copy(io.Discard, c.br) // until the gateway closes
	select {
	case m := <-got:
		t.Fatalf("the instance got a %s after the 408", m)
	default:
	}
}

// A pooled connection on which the instance sent bytes while idle is not
// reused, even after its read deadline passed (ResponseReadTimeout shorter
// than IdleConnTimeout).
func TestStaleConnectionAfterItsDeadline(t *testing.T) {
	sent := make(chan struct{}, 4)
	faulty := testkit.RawServer(t, func(c net.Conn) { go gatewaysuite.FaultyInstance(c, sent) })
	store := registry.New(registry.Config{})
	register(t, store, "faulty", "f", faulty.Port)
	base, _, _ := startServer(t, Config{Routing: routing.Config{ReadTimeout: 300 * time.Millisecond}}, ServerConfig{Loops: -1}, store)
	if _, _, body := do(t, "GET", base+"/faulty/late", nil); body != "answer to /late" {
		t.Fatalf("late: %q", body)
	}
	<-sent
	time.Sleep(400 * time.Millisecond) // past the connection's read deadline
	if _, _, body := do(t, "GET", base+"/faulty/two", nil); body != "answer to /two" {
		t.Fatalf("after stray bytes: %q", body)
	}
}

// From a trusted proxy, repeated Forwarded fields keep their order and
// its first X-Forwarded-Prefix stands.
func TestTrustedProxyFieldOrder(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := registry.New(registry.Config{})
			serve(t, store, "echo", "a", func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "%q %q %q", r.Header.Values("Forwarded"), r.Header.Values("X-Forwarded-Prefix"), r.Header.Values("X-Forwarded-For"))
			})
			base, _, _ := startServer(t, Config{Routing: routing.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}, ServerConfig{Loops: m.loops}, store)
			c := dialRaw(t, base)
			c.send("GET /echo/x HTTP/1.1\r\nHost: a\r\nForwarded: for=9.9.9.9\r\nForwarded: for=8.8.8.8\r\n" +
				"X-Forwarded-Prefix: /p/\r\nX-Forwarded-Prefix: /q\r\nX-Forwarded-For: 1.1.1.1\r\nX-Forwarded-For: 2.2.2.2\r\n\r\n")
			_, body := c.read("GET")
			want := `["for=9.9.9.9" "for=8.8.8.8"] ["/p/echo"] ["1.1.1.1, 2.2.2.2, 127.0.0.1"]`
			if body != want {
				t.Errorf("got %s, want %s", body, want)
			}
		})
	}
}

// With a Connection header in the request or the response, repeated
// fields keep their order both ways; a response's Keep-Alive goes and its
// Date stays; the special headers Connection names go too.
func TestConnectionHeadersKeepTheOrder(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := registry.New(registry.Config{})
			serve(t, store, "echo", "a", func(w http.ResponseWriter, r *http.Request) {
				h := w.Header()
				h["Connection"] = []string{"keep-alive"}
				h["Keep-Alive"] = []string{"timeout=5"}
				h["Vary"] = []string{"A", "B"}
				fmt.Fprintf(w, "%q %q %q", r.Header.Values("Via"), r.Header.Values("Cookie"), r.Header.Values("X-Hop"))
			})
			base, _, _ := startServer(t, Config{}, ServerConfig{Loops: m.loops}, store)
			c := dialRaw(t, base)
			c.send("GET /echo/x HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Cookie, X-Hop\r\nVia: 1 a\r\nCookie: s=1\r\nX-Hop: 1\r\nVia: 1 b\r\nX-Z: 1\r\n\r\n")
			resp, body := c.read("GET")
			if want := `["1 a" "1 b"] [] []`; body != want {
				t.Errorf("the instance saw %s, want %s", body, want)
			}
			if v := resp.Header.Values("Vary"); len(v) != 2 || v[0] != "A" || v[1] != "B" {
				t.Errorf("Vary = %q", v)
			}
			if resp.Header.Get("Keep-Alive") != "" || len(resp.Header.Values("Date")) != 1 {
				t.Errorf("Keep-Alive %q, Date %q", resp.Header.Get("Keep-Alive"), resp.Header.Values("Date"))
			}
		})
	}
}

// HeaderTimeout counts from a request's first byte on a new connection
// too: a client may wait up to ReadTimeout before it sends anything.
func TestHeaderTimeoutFromTheFirstByte(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := registry.New(registry.Config{})
			serve(t, store, "echo", "a", echoBody)
			base, _, _ := startServer(t, Config{}, ServerConfig{Loops: m.loops, HeaderTimeout: 300 * time.Millisecond, ReadTimeout: 5 * time.Second}, store)
			c := dialRaw(t, base)
			time.Sleep(800 * time.Millisecond) // idle, within ReadTimeout
			c.send("GET /echo/x HTTP/1.1\r\nHost: a\r\n\r\n")
			if resp, body := c.read("GET"); resp.StatusCode != 200 {
				t.Fatalf("%d %q", resp.StatusCode, body)
			}
		})
	}
}
