package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// What clients get back through the gateway: response headers and
// framings as the instance sent them, answers in place of an instance's,
// tunnels, and clients that misbehave.

// The instance's response headers reach the client as sent: its Date
// and Server, every Set-Cookie, no Content-Type added; HEAD keeps the
// length. A response without a Date gets one.
func TestResponseHeadersPassThrough(t *testing.T) {
	store := registry.New(registry.Config{})
	serve(t, store, "orders", "a", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Server", "backend/1")
		h.Set("Date", "Mon, 02 Jan 2006 15:04:05 GMT")
		h.Add("Set-Cookie", "a=1")
		h.Add("Set-Cookie", "b=2")
		if r.URL.Path == "/empty" {
			h["Content-Type"] = nil
			w.WriteHeader(204)
			return
		}
		h.Set("Content-Length", "5")
		h.Set("Content-Type", "text/x-test")
		io.WriteString(w, "hello")
	})
	base, _, _ := start(t, Config{}, store)
	raw := dialRaw(t, base)
	raw.send("GET /orders/x HTTP/1.1\r\nHost: gw\r\n\r\nHEAD /orders/x HTTP/1.1\r\nHost: gw\r\n\r\nGET /orders/empty HTTP/1.1\r\nHost: gw\r\n\r\n")
	for _, method := range []string{"GET", "HEAD", "GET"} {
		resp, body := raw.read(method)
		h := resp.Header
		if len(h.Values("Date")) != 1 || h.Get("Date") != "Mon, 02 Jan 2006 15:04:05 GMT" || h.Get("Server") != "backend/1" || len(h.Values("Set-Cookie")) != 2 {
			t.Errorf("%s: headers %v", method, h)
		}
		switch {
		case resp.StatusCode == 204:
			if _, ok := h["Content-Type"]; ok {
				t.Errorf("204: Content-Type %q added", h.Get("Content-Type"))
			}
		case method == "HEAD":
			if resp.ContentLength != 5 || len(body) != 0 {
				t.Errorf("HEAD: length %d, body %q", resp.ContentLength, body)
			}
		default:
			if body != "hello" || h.Get("Content-Type") != "text/x-test" {
				t.Errorf("GET: %d %q", resp.StatusCode, body)
			}
		}
	}
}

// A request that names no application goes to Other (default 404).
func TestNoApplicationGoesToOther(t *testing.T) {
	store := registry.New(registry.Config{})
	base, _, _ := start(t, Config{}, store)
	if status, _, _ := do(t, "GET", base+"/", nil); status != 404 {
		t.Errorf("/: %d", status)
	}
	other, _, _ := start(t, Config{Other: func(ctx *fasthttp.RequestCtx) { ctx.WriteString("home") }}, store)
	if status, _, body := do(t, "GET", other+"/", nil); status != 200 || body != "home" {
		t.Errorf("/ with Other: %d %q", status, body)
	}
}

// registerRaw registers instance "a" of app in store at a
// testkit.RawServer, which hands each connection it accepts to answer and
// closes it once answer returns.
func registerRaw(t *testing.T, store *registry.Store, app string, answer func(c net.Conn)) {
	t.Helper()
	addr := testkit.RawServer(t, func(c net.Conn) {
		defer c.Close()
		answer(c)
	})
	register(t, store, app, "a", addr.Port)
}

// A tunnel may stay quiet past ReadTimeout; Close ends it.
func TestCloseEndsTunnels(t *testing.T) {
	store := registry.New(registry.Config{})
	registerRaw(t, store, "echo", func(c net.Conn) { // an instance that switches protocols, then echoes
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		io.Copy(c, br)
	})
	_, g, srv := startServer(t, Config{}, ServerConfig{ReadTimeout: 300 * time.Millisecond}, store)
	conn, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "GET /echo/ HTTP/1.1\r\nHost: gw\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("%v %v", resp, err)
	}
	time.Sleep(700 * time.Millisecond) // a quiet tunnel outlives ReadTimeout
	io.WriteString(conn, "ping")
	got := make([]byte, 4)
	if _, err := io.ReadFull(br, got); err != nil || string(got) != "ping" {
		t.Fatalf("echo: %q %v", got, err)
	}
	if n := g.hijacked.count(); n != 1 {
		t.Fatalf("%d tunnels", n)
	}
	g.Close()
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the tunnel is still open after Close")
	}
}

// The gateway's own answers: 503 reasons name the app as spelled.
func TestUnavailableNamesTheApp(t *testing.T) {
	store := registry.New(registry.Config{})
	base, _, _ := start(t, Config{}, store)
	status, h, body := do(t, "GET", base+"/Inventory/x", nil)
	if status != 503 || body != `no application "Inventory" is registered`+"\n" || h.Get("Cache-Control") != "no-store" {
		t.Errorf("%d %q %v", status, body, h)
	}
	_ = strconv.Itoa
}

// A client that gives up in the middle of its upload costs the instance
// nothing: it is not marked failed. Expect: 100-continue and HTTP/1.0
// requests without Host work.
func TestClientSideTroubles(t *testing.T) {
	store := registry.New(registry.Config{})
	for _, id := range []string{"a", "b"} {
		serve(t, store, "files", id, func(w http.ResponseWriter, r *http.Request) {
			n, _ := io.Copy(io.Discard, r.Body)
			w.Header().Set("X-Instance", id)
			fmt.Fprintf(w, "got %d", n)
		})
	}
	names := map[string]bool{}
	base, _, _ := start(t, Config{}, store)
	hostport := strings.TrimPrefix(base, "http://")

	conn, err := net.Dial("tcp", hostport)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /files/up HTTP/1.1\r\nHost: gw\r\nContent-Length: 10000000\r\n\r\n%s", strings.Repeat("x", 200<<10))
	time.Sleep(100 * time.Millisecond)
	conn.Close()
	// Both instances still take requests: neither was marked failed.
	time.Sleep(100 * time.Millisecond)
	for range 4 {
		_, h, _ := do(t, "GET", base+"/files/x", nil)
		names[h.Get("X-Instance")] = true
	}
	if len(names) != 2 {
		t.Errorf("instances answering after an aborted upload: %v", names)
	}

	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, ExpectContinueTimeout: 5 * time.Second}}
	req, _ := http.NewRequest("POST", base+"/files/up", strings.NewReader(strings.Repeat("y", 300<<10)))
	req.Header.Set("Expect", "100-continue")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != fmt.Sprintf("got %d", 300<<10) {
		t.Errorf("Expect: 100-continue: %d %q", resp.StatusCode, body)
	}

	conn, err = net.Dial("tcp", hostport)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "GET /files/old HTTP/1.0\r\n\r\n")
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "got 0" {
		t.Errorf("HTTP/1.0 without Host: %d %q", resp.StatusCode, body)
	}
}

// Response bodies of every framing cross the gateway: chunked (with its
// trailer), and delimited by the instance closing the connection.
func TestResponseFramings(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { testResponseFramings(t, ServerConfig{Loops: oneLoop(m.loops)}) })
	}
}

func testResponseFramings(t *testing.T, scfg ServerConfig) {
	store := registry.New(registry.Config{})
	chunk := strings.Repeat("c", 100<<10)
	var conns atomic.Int32
	chunked := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		for range 3 {
			io.WriteString(w, chunk)
			w.(http.Flusher).Flush()
		}
		w.Header().Set("X-Sum", "300k")
	}))
	chunked.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	chunked.Start()
	defer chunked.Close()
	register(t, store, "chunked", "a", chunked.Listener.Addr().(*net.TCPAddr).Port)

	registerRaw(t, store, "identity", func(c net.Conn) { // answers one request with a body that ends when the connection does
		http.ReadRequest(bufio.NewReader(c))
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"+strings.Repeat("i", 70<<10))
	})
	base, _, _ := startServer(t, Config{}, scfg, store)

	for range 2 {
		resp, err := client.Get(base + "/chunked/x")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(body) != 300<<10 || resp.Trailer.Get("X-Sum") != "300k" {
			t.Errorf("chunked: %d bytes, trailer %v, %v", len(body), resp.Trailer, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections to the chunked instance, want 1 reused", n)
	}
	status, h, body := do(t, "GET", base+"/identity/x", nil)
	if status != 200 || len(body) != 70<<10 {
		t.Errorf("close-delimited: %d, %d bytes", status, len(body))
	}
	if _, err := http.ParseTime(h.Get("Date")); err != nil || len(h.Values("Date")) != 1 {
		t.Errorf("a response without Date got %q", h.Values("Date"))
	}
}

// ReadTimeout bounds each wait for a client, not a whole body: a slow
// upload that never pauses that long goes through, one that stops is cut
// off, and a quiet tunnel is left alone.
func TestClientReadTimeoutBoundsEachWait(t *testing.T) {
	store := registry.New(registry.Config{})
	serve(t, store, "files", "a", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "got %d", n)
	})
	_, _, srv := startServer(t, Config{}, ServerConfig{ReadTimeout: 400 * time.Millisecond}, store)
	addr := srv.Addr().String()

	upload := func(pause time.Duration) (string, error) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return "", err
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		piece := strings.Repeat("x", 100<<10)
		fmt.Fprintf(conn, "POST /files/up HTTP/1.1\r\nHost: gw\r\nContent-Length: %d\r\n\r\n", 6*len(piece))
		for range 6 {
			if _, err := io.WriteString(conn, piece); err != nil {
				return "", err
			}
			time.Sleep(pause)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return "", err
		}
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, b), nil
	}
	// 6 pauses of 150 ms: far longer than ReadTimeout in all, never that long at once.
	if got, err := upload(150 * time.Millisecond); err != nil || got != fmt.Sprintf("200 got %d", 600<<10) {
		t.Errorf("slow upload: %q %v", got, err)
	}
	if got, err := upload(time.Second); err == nil && strings.HasPrefix(got, "200") {
		t.Errorf("an upload pausing past ReadTimeout went through: %q", got)
	}
	// A connection idle past ReadTimeout is closed (fasthttp answers 408
	// first, when no request came at all).
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	began := time.Now()
	if b, err := io.ReadAll(conn); err != nil || time.Since(began) > 3*time.Second {
		t.Errorf("an idle connection: %q %v after %v", b, err, time.Since(began))
	}
}
