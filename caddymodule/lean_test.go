package caddymodule

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/routing"
)

// scripted is an instance whose answers a test writes byte by byte:
// answer is called for each request it reads, with the connection's
// number (from 1) and the request's on that connection (from 1), and
// returns what to write back; close, to close the connection after it
// (before writing anything when the answer is "").
type scripted struct {
	addr     *net.TCPAddr
	mu       sync.Mutex
	conns    []net.Conn
	requests []string // "conn/request method path"
	ended    int      // connections closed
	wg       sync.WaitGroup
}

func newScripted(t *testing.T, answer func(conn, req int, r *http.Request) (out string, close bool)) *scripted {
	s := &scripted{}
	n := 0
	s.addr = testkit.RawServer(t, func(c net.Conn) {
		n++
		conn := n
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				c.Close()
				s.mu.Lock()
				s.ended++
				s.mu.Unlock()
			}()
			br := bufio.NewReader(c)
			for req := 1; ; req++ {
				r, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				io.Copy(io.Discard, r.Body)
				s.mu.Lock()
				s.requests = append(s.requests, strconv.Itoa(conn)+"/"+strconv.Itoa(req)+" "+r.Method+" "+r.URL.Path)
				s.mu.Unlock()
				out, closing := answer(conn, req, r)
				if out != "" {
					if _, err := io.WriteString(c, out); err != nil {
						return
					}
				}
				if closing {
					return
				}
			}
		}()
	})
	t.Cleanup(func() { // before RawServer's: the connections end first
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// seen is what the instance read so far.
func (s *scripted) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// closed is how many connections the instance saw closed.
func (s *scripted) closed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// behind loads a gateway whose app name has the scripted instance alone.
func (s *scripted) behind(t *testing.T, name, options string) {
	t.Helper()
	loadConfig(t, gatewayConfig("registry "+newRegistry(name), options))
	b := &backend{name: name, port: s.addr.Port}
	registerVia(t, registryURL, b.instance(name))
}

func send(t *testing.T, method, path string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, gatewayURL+path, nil)
	resp, body := testkit.Do(t, keepAlive, req)
	return resp.StatusCode, body, resp.Trailer
}

// A connection from the pool that the instance closes as the next
// request reaches it (its idle timeout in flight) fails before any byte
// of the answer: a GET goes again on a new connection and gets its
// answer; a POST, which the instance may have acted on, is not sent
// again (502). The gateway's own retries are off: the GET's second try
// is the lean client's.
func TestLeanRetriesAStaleConnectionOnce(t *testing.T) {
	ok := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		if req == 2 {
			return "", true // the pooled connection's second request: closed unanswered
		}
		return ok, false
	})
	inst.behind(t, "stale", "lb_retries 0")
	for _, method := range []string{"GET", "GET"} {
		if status, body, _ := send(t, method, "/stale/a"); status != 200 || body != "ok" {
			t.Fatalf("%s: %d %q", method, status, body)
		}
	}
	if status, _, _ := send(t, "POST", "/stale/b"); status != 502 {
		t.Errorf("a POST whose pooled connection closed unanswered: %d, want 502", status)
	}
	want := []string{"1/1 GET /a", "1/2 GET /a", "2/1 GET /a", "2/2 POST /b"}
	testkit.Want(t, "what the instance read", inst.seen(), want)
}

// An answer in chunks reaches the client with its trailers, and its
// connection is used again; an answer without a length is read until
// the instance closes the connection, and the next request goes on a new
// one (a POST, which would fail on the closed one and not go again).
func TestLeanBodiesChunkedAndToClose(t *testing.T) {
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		if r.URL.Path == "/close" {
			return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", true
		}
		return "HTTP/1.1 200 OK\r\nTrailer: X-Sum\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 42\r\n\r\n", false
	})
	inst.behind(t, "bodies", "")
	for range 2 {
		status, body, trailer := send(t, "GET", "/bodies/chunked")
		if status != 200 || body != "hello world" || trailer.Get("X-Sum") != "42" {
			t.Fatalf("chunked: %d %q trailer %v", status, body, trailer)
		}
	}
	for _, method := range []string{"GET", "POST"} {
		if status, body, _ := send(t, method, "/bodies/close"); status != 200 || body != "until the end" {
			t.Fatalf("%s to close: %d %q", method, status, body)
		}
	}
	want := []string{"1/1 GET /chunked", "1/2 GET /chunked", "1/3 GET /close", "2/1 POST /close"}
	testkit.Want(t, "what the instance read", inst.seen(), want)
}

// An informational answer reaches the client, as through reverse_proxy
// (103 Early Hints with its Link; its headers not in the response
// after it), but 100 Continue, which the gateway skips.
func TestLeanForwardsEarlyHints(t *testing.T) {
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		return "HTTP/1.1 100 Continue\r\n\r\n" +
			"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\nConnection: X-Hop\r\nX-Hop: 1\r\n\r\n" +
			"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	inst.behind(t, "hints", "")
	var mu sync.Mutex
	var got []string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, strconv.Itoa(code)+" "+h.Get("Link")+" hop="+h.Get("X-Hop"))
		return nil
	}}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", gatewayURL+"/hints/x", nil)
	resp, body := testkit.Do(t, keepAlive, req)
	if resp.StatusCode != 200 || body != "ok" || resp.Header.Get("Link") != "" {
		t.Errorf("the response: %d %q Link %q", resp.StatusCode, body, resp.Header.Get("Link"))
	}
	mu.Lock()
	defer mu.Unlock()
	testkit.Want(t, "the informational answers", got, []string{"103 </a.css>; rel=preload hop="})
}

// A response head over the bound fails the attempt: 502.
func TestLeanResponseHeadBound(t *testing.T) {
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", maxLeanResponseHead) + "\r\nContent-Length: 2\r\n\r\nok", true
	})
	inst.behind(t, "bighead", "")
	if status, body, _ := send(t, "GET", "/bighead/x"); status != 502 {
		t.Errorf("a head of a MiB and more: %d %q, want 502", status, body)
	}
}

// The sweeper closes the connections idle for the idle timeout; close
// stops it and waits for it, and closes what is left: no goroutine of
// the pool outlives it.
func TestLeanPoolSweepsAndCloses(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // after the server's cleanup
	closed := make(chan int, 4)
	n := 0
	inst := testkit.RawServer(t, func(c net.Conn) {
		n++
		go func(id int) { // ends when the pool closes its side
			io.Copy(io.Discard, c)
			c.Close()
			closed <- id
		}(n)
	})
	clock := testkit.NewFakeClock()
	p := newLeanPool(time.Second, time.Second, time.Minute, time.Millisecond, 4, clock.Now)
	get := func() *leanConn {
		c, err := p.get(context.Background(), inst.String())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := get(), get()
	p.put(a)
	clock.Advance(30 * time.Second)
	p.put(b)
	clock.Advance(30 * time.Second) // a idle a minute, b half
	next := func(what string) int {
		select {
		case id := <-closed:
			return id
		case <-time.After(10 * time.Second): // a bound, not a wait
			t.Fatalf("no connection closed by %s", what)
			return 0
		}
	}
	if id := next("the sweeper"); id != 1 {
		t.Errorf("the sweeper closed connection %d, want 1", id)
	}
	testkit.Want(t, "idle connections after the sweep", p.idleCount(), 1)
	p.close()
	if id := next("close"); id != 2 {
		t.Errorf("close closed connection %d, want 2", id)
	}
	testkit.Want(t, "idle connections after close", p.idleCount(), 0)
}

// A connection the instance closed while it was idle is not used again:
// the next request, a POST say, goes on a new one.
func TestLeanPoolDropsConnectionsClosedWhileIdle(t *testing.T) {
	accepted := make(chan net.Conn, 2)
	inst := testkit.RawServer(t, func(c net.Conn) { accepted <- c })
	clock := testkit.NewFakeClock()
	p := newLeanPool(time.Second, time.Second, time.Minute, time.Minute, 4, clock.Now)
	defer p.close()
	first, err := p.get(context.Background(), inst.String())
	if err != nil {
		t.Fatal(err)
	}
	p.put(first)
	(<-accepted).Close() // the instance's idle timeout
	testkit.Eventually(t, 5*time.Second, "the instance's close to arrive", func() bool { return !first.stillOpen() })
	next, err := p.get(context.Background(), inst.String())
	if err != nil {
		t.Fatal(err)
	}
	defer next.close()
	if next == first {
		t.Fatal("the connection the instance closed was used again")
	}
	(<-accepted).Close()
}

// An instance that answers an upload before taking it whole (413) and
// closes has its answer reach the client, as net/http, which reads while
// it writes, has it: the gateway's write failing is not the attempt's
// failure when the answer came.
func TestLeanAnswerBeforeTheWholeUpload(t *testing.T) {
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	}))
	t.Cleanup(inst.Close)
	loadConfig(t, gatewayConfig("registry "+newRegistry("early-answer"), ""))
	registerVia(t, registryURL, serverBackend("e", inst).instance("uploads"))
	// A client of its own: Go's, its upload cut short by the gateway's
	// server in turn (which closes a connection whose body it did not
	// read), may report its failed write before the answer it got.
	conn := dialGateway(t)
	defer conn.Close()
	const size = 8 << 20
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		io.WriteString(conn, "POST /uploads/u HTTP/1.1\r\nHost: gw\r\nContent-Length: "+strconv.Itoa(size)+"\r\n\r\n")
		conn.Write(make([]byte, size)) // cut short: its error is not the test's
	}()
	defer func() { conn.Close(); <-sent }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || string(body) != "too large\n" {
		t.Errorf("an 8 MiB upload the instance refused at once: %d %q", resp.StatusCode, body)
	}
}

// A client that leaves while its instance is silent ends the attempt at
// once: the gateway closes its connection to the instance then, not at
// the response_header_timeout, and the instance is not taken for a
// failed one (max_fails 1 would keep it out): the next request reaches
// it.
func TestLeanClientLeaving(t *testing.T) {
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		if r.URL.Path == "/silent" {
			return "", false // no answer: the gateway waits
		}
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	inst.behind(t, "leaving", "response_header_timeout 1m\n\t\tmax_fails 1")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", gatewayURL+"/leaving/silent", nil)
	done := make(chan error, 1)
	go func() {
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	testkit.Eventually(t, 5*time.Second, "the request to reach the instance", func() bool { return len(inst.seen()) == 1 })
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the request whose client left was answered")
	}
	testkit.Eventually(t, 5*time.Second, "the gateway to close the instance's connection", func() bool { return inst.closed() == 1 })
	if status, body, _ := send(t, "GET", "/leaving/after"); status != 200 || body != "ok" {
		t.Errorf("the next request: %d %q", status, body)
	}
}

// An instance the environment's HTTP_PROXY and NO_PROXY send through a
// proxy is left to net/http's Transport, which goes through it; one on
// loopback or in NO_PROXY goes direct, on the lean client. The
// environment is read when the transport is made.
func TestLeanLeavesProxiedInstancesToTheTransport(t *testing.T) {
	r := httptest.NewRequest("GET", "http://gw/a", nil)
	t.Setenv("NO_PROXY", "10.0.0.2")
	for _, proxy := range []string{"", "http://127.0.0.1:3128"} {
		t.Setenv("HTTP_PROXY", proxy)
		l := newLeanClient(routing.Config{}.WithDefaults(), time.Now)
		for addr, direct := range map[string]bool{"10.0.0.1:8080": proxy == "", "10.0.0.2:8080": true, "127.0.0.1:8080": true} {
			if got := l.carries(r, addr); got != direct {
				t.Errorf("HTTP_PROXY=%q: the lean client carries %s: %t, want %t", proxy, addr, got, direct)
			}
		}
		l.close()
	}
}

// As net/http's Transport: a request without Accept-Encoding (and no
// Range, not a HEAD) asks the instance for gzip, and the client gets the
// answer un-gzipped, of unknown length; a client that asked for gzip
// itself gets the instance's gzip as it came.
func TestLeanGzipAsNetHTTP(t *testing.T) {
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Asked", r.Header.Get("Accept-Encoding"))
		if r.Header.Get("Accept-Encoding") != "gzip" {
			io.WriteString(w, "plain")
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, "unzipped")
		zw.Close()
	}))
	t.Cleanup(inst.Close)
	loadConfig(t, gatewayConfig("registry "+newRegistry("gzip"), ""))
	registerVia(t, registryURL, serverBackend("g", inst).instance("zipped"))
	for _, c := range []struct {
		method, header, asked, encoding, body string
		length                                int64
	}{
		{"GET", "", "gzip", "", "unzipped", -1},
		{"GET", "Range: bytes=0-\r\n", "", "", "plain", 5},
		{"HEAD", "", "", "", "", 5},
		{"GET", "Accept-Encoding: gzip\r\n", "gzip", "gzip", "", -2},
	} {
		conn := dialGateway(t)
		io.WriteString(conn, c.method+" /zipped/x HTTP/1.1\r\nHost: gw\r\n"+c.header+"Connection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: c.method})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		conn.Close()
		got := resp.Header.Get("X-Asked") + " " + resp.Header.Get("Content-Encoding")
		if want := c.asked + " " + c.encoding; got != want {
			t.Errorf("%s %q: asked, encoding %q, want %q", c.method, c.header, got, want)
		}
		if c.length == -2 { // the instance's gzip, untouched
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("%s %q: %v", c.method, c.header, err)
			}
			body, _ = io.ReadAll(zr)
			c.body, c.length = "unzipped", resp.ContentLength
		}
		if string(body) != c.body || resp.ContentLength != c.length {
			t.Errorf("%s %q: %q of length %d, want %q of %d", c.method, c.header, body, resp.ContentLength, c.body, c.length)
		}
	}
}

// An upload of unknown length goes to the instance in chunks, whole; one
// of known length with its Content-Length.
func TestLeanUploads(t *testing.T) {
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%v %d %d %v", r.TransferEncoding, r.ContentLength, n, err)
	}))
	t.Cleanup(inst.Close)
	loadConfig(t, gatewayConfig("registry "+newRegistry("uploads"), ""))
	registerVia(t, registryURL, serverBackend("u", inst).instance("uploads"))
	const size = 300 << 10
	for _, c := range []struct {
		body io.Reader
		want string
	}{
		{io.MultiReader(strings.NewReader(strings.Repeat("x", size))), "[chunked] -1 307200 <nil>"}, // no length: chunked
		{strings.NewReader(strings.Repeat("x", size)), "[] 307200 307200 <nil>"},
	} {
		req, _ := http.NewRequest("POST", gatewayURL+"/uploads/u", c.body)
		resp, body := testkit.Do(t, client, req)
		if resp.StatusCode != 200 || body != c.want {
			t.Errorf("an upload: %d %q, want %q", resp.StatusCode, body, c.want)
		}
	}
}

// A config unloaded closes its gateway's idle connections to instances
// and stops its pool's sweeper: none is left beside the new config's.
func TestLeanPoolEndsWithItsConfig(t *testing.T) {
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	inst.behind(t, "unload", "")
	if status, body, _ := send(t, "GET", "/unload/a"); status != 200 || body != "ok" {
		t.Fatalf("%d %q", status, body)
	}
	loadConfig(t, gatewayConfig("registry "+newRegistry("unload"), "")) // unloads the first
	testkit.Eventually(t, 5*time.Second, "the unloaded gateway's idle connection to close", func() bool { return inst.closed() == 1 })
	testkit.Eventually(t, 5*time.Second, "one sweeper, the new config's", func() bool { return sweepers() == 1 })
}

// sweepers is how many lean pools' sweepers run.
func sweepers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "caddymodule.newLeanPool.func1")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// An upload whose body fails to read on the gateway's side (over
// request_body's max_size, in chunks) ends the attempt at once, as on
// net/http's Transport: the instance, which got part of it, is not
// waited for (its answer would come at response_header_timeout, if
// ever).
func TestLeanUploadCutOnTheGatewaysSide(t *testing.T) {
	readErr := make(chan error, 1)
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(io.Discard, r.Body)
		readErr <- err
	}))
	t.Cleanup(inst.Close)
	loadConfig(t, testConfig("", "registry "+newRegistry("cut-upload"), site(registryPort, "\teureka_server"),
		site(gatewayPort, "\trequest_body {\n\t\tmax_size 10KB\n\t}\n\teureka_gateway {\n\t\tresponse_header_timeout 1m\n\t}")))
	registerVia(t, registryURL, serverBackend("c", inst).instance("uploads"))
	req, _ := http.NewRequest("POST", gatewayURL+"/uploads/u", io.MultiReader(strings.NewReader(strings.Repeat("x", 100<<10))))
	resp, body := testkit.Do(t, client, req) // client's 10 s, not the minute
	if resp.StatusCode < 400 {
		t.Errorf("an upload over max_size: %d %q", resp.StatusCode, body)
	}
	select {
	case err := <-readErr:
		if err == nil {
			t.Error("the instance read a whole body cut on the gateway's side")
		}
	case <-time.After(10 * time.Second): // a bound, not a wait
		t.Fatal("the instance is still reading a body the gateway cut")
	}
}
