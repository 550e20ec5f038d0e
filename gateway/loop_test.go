package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/routing"
)

// rawClient is one kept-alive connection to the gateway, written and read
// by hand.
type rawClient struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

func dialRaw(t *testing.T, base string) *rawClient {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawClient{t: t, conn: conn, br: bufio.NewReader(conn)}
}

func (c *rawClient) send(raw string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, raw); err != nil {
		c.t.Fatal(err)
	}
}

// read reads one response and its body.
func (c *rawClient) read(method string) (*http.Response, string) {
	c.t.Helper()
	resp, err := http.ReadResponse(c.br, &http.Request{Method: method})
	if err != nil {
		c.t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp, string(b)
}

// One connection may mix what the loops serve with what fasthttp does: a
// body goes to fasthttp with the connection, a long response streams and
// the connection comes back; each answer arrives in order.
func TestLoopsHandOverAndTakeBack(t *testing.T) {
	store := registry.New(registry.Config{})
	big := strings.Repeat("b", 200<<10)
	serve(t, store, "orders", "a", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			io.WriteString(w, big)
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			w.Write(b)
		default:
			io.WriteString(w, "small "+r.URL.Path)
		}
	})
	base, _, _ := start(t, Config{}, store)

	c := dialRaw(t, base)
	for i, step := range []struct{ req, method, want string }{
		{"GET /orders/one HTTP/1.1\r\nHost: gw\r\n\r\n", "GET", "small /one"},
		{"GET /orders/big HTTP/1.1\r\nHost: gw\r\n\r\n", "GET", big},
		{"GET /orders/two HTTP/1.1\r\nHost: gw\r\n\r\n", "GET", "small /two"},
		{"POST /orders/echo HTTP/1.1\r\nHost: gw\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello", "POST", "hello"},
		{"GET /orders/three HTTP/1.1\r\nHost: gw\r\n\r\n", "GET", "small /three"},
	} {
		c.send(step.req)
		resp, body := c.read(step.method)
		if resp.StatusCode != 200 || body != step.want {
			t.Fatalf("step %d: %d, %d bytes %.40q", i, resp.StatusCode, len(body), body)
		}
	}
}

// A client's Connection: close, and HTTP/1.0 without keep-alive, close
// the connection after the response, which says so.
func TestLoopsCloseWhenAsked(t *testing.T) {
	store := registry.New(registry.Config{})
	serve(t, store, "orders", "a", named("a"))
	base, _, _ := start(t, Config{}, store)
	for _, req := range []string{
		"GET /orders/x HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n",
		"GET /orders/x HTTP/1.0\r\nHost: gw\r\n\r\n",
	} {
		c := dialRaw(t, base)
		c.send(req)
		resp, body := c.read("GET")
		if resp.StatusCode != 200 || body != "a" || !resp.Close {
			t.Errorf("%q: %d %q, close %v", req, resp.StatusCode, body, resp.Close)
		}
		if n, err := c.br.ReadByte(); err != io.EOF {
			t.Errorf("%q: connection still open (%v %v)", req, n, err)
		}
	}
}

// An HTTP/1.0 client that asks for keep-alive is told so, and its
// connection serves the next request.
func TestLoopsHTTP10KeepAlive(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := registry.New(registry.Config{})
			serve(t, store, "orders", "a", named("a"))
			base, _, _ := startServer(t, Config{}, ServerConfig{Loops: m.loops}, store)
			c := dialRaw(t, base)
			for i := range 2 {
				c.send("GET /orders/x HTTP/1.0\r\nHost: gw\r\nConnection: keep-alive\r\n\r\n")
				resp, body := c.read("GET")
				if resp.StatusCode != 200 || body != "a" || resp.Close || !strings.EqualFold(resp.Header.Get("Connection"), "keep-alive") {
					t.Fatalf("request %d: %d %q, close %v, Connection %q", i, resp.StatusCode, body, resp.Close, resp.Header.Get("Connection"))
				}
			}
		})
	}
}

// So is one whose requests the gateway answers itself: a rate limit's
// 429s (the loops answer them), on the connection kept.
func TestHTTP10KeepAliveRefused(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			rules, err := routing.ParseRules("test", []byte("apps:\n  orders:\n    limits: [{key: app, rate: 1/h, burst: 1}]\n"))
			if err != nil {
				t.Fatal(err)
			}
			store := registry.New(registry.Config{})
			serve(t, store, "orders", "a", named("a"))
			base, g, _ := startServer(t, Config{}, ServerConfig{Loops: m.loops}, store)
			g.Router().SetRules(rules)
			c := dialRaw(t, base)
			for i, want := range []int{200, 429, 429} {
				c.send("GET /orders/x HTTP/1.0\r\nHost: gw\r\nConnection: keep-alive\r\n\r\n")
				resp, _ := c.read("GET")
				if resp.StatusCode != want || resp.Close || !strings.EqualFold(resp.Header.Get("Connection"), "keep-alive") {
					t.Fatalf("request %d: %d, close %v, Connection %q", i, resp.StatusCode, resp.Close, resp.Header.Get("Connection"))
				}
			}
		})
	}
}

// An instance that closes a kept-alive connection while it is idle costs
// the client nothing: the request goes again on a fresh connection.
func TestLoopsResendOnStaleConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	var wg sync.WaitGroup
	defer wg.Wait()
	defer ln.Close()
	wg.Add(1)
	go func() { // answers one request per connection, then closes it unannounced
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := accepted.Add(1)
			if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n%d", n)
			}
			c.Close()
		}
	}()
	store := registry.New(registry.Config{})
	register(t, store, "orders", "a", ln.Addr().(*net.TCPAddr).Port)
	base, _, _ := startServer(t, Config{}, ServerConfig{Loops: 1}, store)
	c := dialRaw(t, base)
	for i := 1; i <= 3; i++ {
		c.send("GET /orders/x HTTP/1.1\r\nHost: gw\r\n\r\n")
		resp, body := c.read("GET")
		if resp.StatusCode != 200 || body != fmt.Sprint(i) {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, body)
		}
	}
}

// A client that sends many requests before reading any gets every answer,
// in order: the loop stops queueing responses for it at maxUnread and goes
// on as it reads.
func TestLoopsPipelinedRequestsAnsweredInOrder(t *testing.T) {
	store := registry.New(registry.Config{})
	pad := strings.Repeat("p", 60<<10)
	serve(t, store, "orders", "a", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.URL.Path+pad)
	})
	base, _, _ := startServer(t, Config{}, ServerConfig{Loops: 1}, store)
	c := dialRaw(t, base)
	const n = 64 // 3.8 MB of answers
	var reqs strings.Builder
	for i := range n {
		fmt.Fprintf(&reqs, "GET /orders/%d HTTP/1.1\r\nHost: gw\r\n\r\n", i)
	}
	wrote := make(chan error, 1)
	go func() { // the gateway may not take it all before we read
		_, err := io.WriteString(c.conn, reqs.String())
		wrote <- err
	}()
	defer func() {
		if err := <-wrote; err != nil {
			t.Error(err)
		}
	}()
	for i := range n {
		resp, body := c.read("GET")
		if want := fmt.Sprintf("/%d", i) + pad; resp.StatusCode != 200 || body != want {
			t.Fatalf("answer %d: %d %.10q", i, resp.StatusCode, body)
		}
	}
}

// ReadTimeout closes a connection whose request header stops coming, and
// one left idle after its response.
func TestLoopsReadTimeout(t *testing.T) {
	store := registry.New(registry.Config{})
	serve(t, store, "orders", "a", named("a"))
	base, _, _ := startServer(t, Config{}, ServerConfig{ReadTimeout: 300 * time.Millisecond}, store)
	half := dialRaw(t, base)
	half.send("GET /orders/x HTTP/1.1\r\nHo")
	idle := dialRaw(t, base)
	idle.send("GET /orders/x HTTP/1.1\r\nHost: gw\r\n\r\n")
	if resp, body := idle.read("GET"); resp.StatusCode != 200 || body != "a" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	for name, c := range map[string]*rawClient{"half a header": half, "idle": idle} {
		c.conn.SetDeadline(time.Now().Add(5 * time.Second))
		if b, err := io.ReadAll(c.br); err != nil || len(b) != 0 {
			t.Errorf("%s: %q %v, want the connection closed", name, b, err)
		}
	}
}

// Cases a review found, each on one kept-alive connection, in both modes:
// a request with a body pipelined behind one the loop serves; an error
// answer to HEAD (no body); header lines ending in a bare LF; an instance
// that sends no Date (one is added, once) and a long response without a
// Content-Type (none is added).
func TestLoopsPipelinesAndHeaders(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := registry.New(registry.Config{})
			long := strings.Repeat("l", 100<<10)
			serve(t, store, "orders", "a", func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/nodate":
					w.Header()["Date"] = nil
					io.WriteString(w, "nodate")
				case "/long":
					w.Header()["Content-Type"] = nil
					w.Header().Set("Content-Length", fmt.Sprint(len(long)))
					io.WriteString(w, long)
				case "/echo":
					b, _ := io.ReadAll(r.Body)
					w.Write(b)
				default:
					io.WriteString(w, r.URL.Path)
				}
			})
			register(t, store, "dead", "d", testkit.FreePort(t))
			base, _, _ := startServer(t, Config{}, ServerConfig{Loops: oneLoop(m.loops)}, store)
			c := dialRaw(t, base)
			c.send("GET /orders/a HTTP/1.1\r\nHost: gw\r\n\r\n" +
				"POST /orders/echo HTTP/1.1\r\nHost: gw\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello")
			for _, want := range []string{"/a", "hello"} {
				if resp, body := c.read("GET"); resp.StatusCode != 200 || body != want {
					t.Fatalf("pipelined: %d %q, want %q", resp.StatusCode, body, want)
				}
			}
			c = dialRaw(t, base) // the body took the first to fasthttp
			c.send("HEAD /dead/x HTTP/1.1\r\nHost: gw\r\n\r\n")
			if resp, body := c.read("HEAD"); resp.StatusCode != 502 || body != "" {
				t.Fatalf("HEAD to a dead instance: %d %q", resp.StatusCode, body)
			}
			c.send("GET /orders/b HTTP/1.1\nHost: gw\n\nGET /orders/c HTTP/1.1\r\nHost: gw\r\n\r\n")
			for _, want := range []string{"/b", "/c"} {
				if resp, body := c.read("GET"); resp.StatusCode != 200 || body != want {
					t.Fatalf("bare LF: %d %q, want %q", resp.StatusCode, body, want)
				}
			}
			c.send("GET /orders/nodate HTTP/1.1\r\nHost: gw\r\n\r\n")
			if resp, body := c.read("GET"); body != "nodate" || len(resp.Header.Values("Date")) != 1 {
				t.Fatalf("no Date: %q, Date %q", body, resp.Header.Values("Date"))
			}
			c.send("GET /orders/long HTTP/1.1\r\nHost: gw\r\n\r\n")
			if resp, body := c.read("GET"); body != long || resp.Header.Get("Content-Type") != "" {
				t.Fatalf("long: %d bytes, Content-Type %q", len(body), resp.Header.Get("Content-Type"))
			}
		})
	}
}

// MaxConnsPerInstance binds the loops too: requests beyond it wait for a
// connection to come free, and get 503 after DialTimeout.
func TestLoopsMaxConnsPerInstance(t *testing.T) {
	store := registry.New(registry.Config{})
	var open, most, held atomic.Int32
	release := make(chan struct{})
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			held.Add(1)
			<-release
		} else {
			time.Sleep(50 * time.Millisecond)
		}
		io.WriteString(w, "ok")
	}))
	backend.Config.ConnState = func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			n := open.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	backend.Start()
	defer backend.Close()
	register(t, store, "orders", "a", backend.Listener.Addr().(*net.TCPAddr).Port)
	base, _, _ := startServer(t, Config{MaxConnsPerInstance: 2, Routing: routing.Config{DialTimeout: 500 * time.Millisecond}}, ServerConfig{Loops: 1}, store)

	get := func(path string) (int, string) {
		resp, err := client.Get(base + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var wg sync.WaitGroup
	testkit.InParallel(6, func(int) {
		if status, body := get("/orders/x"); status != 200 {
			t.Errorf("%d %q", status, body)
		}
	})
	if n := most.Load(); n > 2 {
		t.Errorf("%d connections to the instance at once, want at most 2", n)
	}

	for range 2 { // both connections held
		wg.Add(1)
		go func() {
			defer wg.Done()
			get("/orders/hold")
		}()
	}
	testkit.Eventually(t, 5*time.Second, "both connections held", func() bool { return held.Load() == 2 })
	if status, body := get("/orders/x"); status != 503 || !strings.Contains(body, "busy") {
		t.Errorf("a request beyond the limit: %d %q", status, body)
	}
	close(release)
	wg.Wait()
}
