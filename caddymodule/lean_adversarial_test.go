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
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/routing"
)

// leanDo makes one attempt of method on l to the instance at addr and
// returns what the client got: the status (0: none) and the body.
func leanDo(t *testing.T, l *leanClient, method, addr string) (int, string, error) {
	t.Helper()
	rec := httptest.NewRecorder()
	w := &statusWriter{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: rec}}
	err := l.attempt(w, httptest.NewRequest(method, "http://gw/a", nil), nil, addr)
	return w.status, rec.Body.String(), err
}

// rawInstance is an instance on loopback that reads the requests of
// each connection in turn and has answer write the bytes it chooses for
// each (the request's body left to it); conn numbers the connections
// from 1.
func rawInstance(t *testing.T, answer func(conn int, c net.Conn, r *http.Request)) *net.TCPAddr {
	n := 0
	return testkit.RawServer(t, func(c net.Conn) {
		n++
		conn := n
		go func() {
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				r, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				answer(conn, c, r)
			}
		}()
	})
}

// An instance that sends a second answer after the first, while the
// connection is back in the pool (a request it answered twice), has the
// connection closed when it is taken next, however soon: the second
// answer never reaches the next client of that connection, which gets
// its own answer on a new one. The pool's clock does not move: the
// connection was idle for no time at all.
func TestLeanUnaskedAnswerNeverReachesTheNextClient(t *testing.T) {
	unasked := make(chan struct{})
	addr := rawInstance(t, func(conn int, c net.Conn, r *http.Request) {
		if conn > 1 || r.URL.Path != "/a" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ngood")
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		<-unasked
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nevil")
	})
	clock := testkit.NewFakeClock()
	l := newLeanClient(routing.Config{}.WithDefaults(), clock.Now)
	defer l.close()
	if status, body, err := leanDo(t, l, "GET", addr.String()); status != 200 || body != "ok" {
		t.Fatalf("the first request: %d %q %v", status, body, err)
	}
	l.pool.mu.Lock()
	pooled := l.pool.idle[addr.String()].conns[0]
	l.pool.mu.Unlock()
	close(unasked)
	testkit.Eventually(t, 5*time.Second, "the unasked answer to reach the gateway", func() bool { return !pooled.stillOpen() })
	if status, body, err := leanDo(t, l, "GET", addr.String()); status != 200 || body != "good" {
		t.Errorf("the next request: %d %q %v, want its own answer, 200 \"good\"", status, body, err)
	}
}

// A method that is not a token (a config's method directive fed from the
// query, which may carry a line break) is refused before anything is
// written, 502, as net/http's Transport refuses it: no second request
// smuggled to the instance in the first's line.
func TestLeanRefusesAMethodThatIsNotAToken(t *testing.T) {
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	loadConfig(t, testConfig("", "registry "+newRegistry("methods"), site(registryPort, "\teureka_server"),
		site(gatewayPort, "\tmethod {query.m}\n\teureka_gateway")))
	registerVia(t, registryURL, (&backend{name: "methods", port: inst.addr.Port}).instance("methods"))
	smuggled := url.QueryEscape("GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\nGET")
	if status, body, _ := send(t, "GET", "/methods/a?m="+smuggled); status != http.StatusBadGateway {
		t.Errorf("a method with a line break: %d %q, want 502", status, body)
	}
	if status, body, _ := send(t, "GET", "/methods/b?m=get"); status != 200 || body != "ok" {
		t.Errorf("a method rewritten to GET: %d %q", status, body)
	}
	var read []string // the request lines, on whichever connection
	for _, s := range inst.seen() {
		read = append(read, s[strings.Index(s, " ")+1:])
	}
	testkit.Want(t, "what the instance read", read, []string{"GET /b"})
}

// An instance's informational answers count, with the final answer's
// head, towards one bound of maxLeanResponseHead, as net/http's
// Transport counts them when it does not hand them out: a flood of 103
// Early Hints (3 MiB of them) ends in a 502 after at most the bound's
// worth reached the client, not in the flood forwarded whole.
func TestLeanInformationalFloodBounded(t *testing.T) {
	hint := "HTTP/1.1 103 Early Hints\r\nLink: </" + strings.Repeat("a", 1000) + ".css>; rel=preload\r\n\r\n"
	const hints = 3 << 10
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		return strings.Repeat(hint, hints) + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	inst.behind(t, "flood", "lb_retries 0") // one attempt: each has the bound
	conn := dialGateway(t)
	defer conn.Close()
	io.WriteString(conn, "GET /flood/x HTTP/1.1\r\nHost: gw\r\n\r\n")
	br := bufio.NewReader(conn)
	forwarded := 0
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("after %d informational answers: %v", forwarded, err)
		}
		if resp.StatusCode >= 200 {
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadGateway {
				t.Errorf("a flood of %d 103s: %d, want 502", hints, resp.StatusCode)
			}
			break
		}
		forwarded++
	}
	if max := maxLeanResponseHead / len(hint); forwarded > max {
		t.Errorf("%d informational answers reached the client, more than the bound's %d", forwarded, max)
	}
}

// An answer without a body (Content-Length: 0, a 204, a 304) that says
// Content-Encoding: gzip reaches the client with it, as through
// net/http's Transport (and reverse_proxy), which un-gzips only a body
// there is: the lean client asked for gzip, but has nothing to un-gzip.
func TestLeanGzipOnlyWithABody(t *testing.T) {
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		switch r.URL.Path {
		case "/204":
			return "HTTP/1.1 204 No Content\r\nContent-Encoding: gzip\r\n\r\n", false
		case "/304":
			return "HTTP/1.1 304 Not Modified\r\nContent-Encoding: gzip\r\nETag: \"v1\"\r\n\r\n", false
		}
		return "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 0\r\n\r\n", false
	})
	for _, transport := range []string{"", "transport reverse_proxy"} {
		inst.behind(t, "nobody", transport)
		for _, path := range []string{"/200", "/204", "/304"} {
			conn := dialGateway(t) // a client that asks no gzip: the gateway does
			io.WriteString(conn, "GET /nobody"+path+" HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			conn.Close()
			body := string(b)
			if got := resp.Header.Get("Content-Encoding"); got != "gzip" || body != "" || resp.ContentLength > 0 {
				t.Errorf("%q %s: %d Content-Encoding %q, %q of length %d, want gzip and no body", transport, path, resp.StatusCode, got, body, resp.ContentLength)
			}
		}
	}
}

// framingCases are answers an instance may frame wrongly or
// ambiguously (RFC 9112 sections 4 - 7), each after its request's
// method and path.
var framingCases = []struct{ method, name, answer string }{
	{"GET", "cl-and-te", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"},
	{"GET", "two-lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok!"},
	{"GET", "signed-length", "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok"},
	{"GET", "length-with-space", "HTTP/1.1 200 OK\r\nContent-Length: 2 2\r\n\r\nok"},
	{"GET", "chunk-overflow", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1ffffffffffffffff\r\nhello\r\n0\r\n\r\n"},
	{"GET", "chunk-extension", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\n\r\n"},
	{"GET", "chunk-not-hex", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"},
	{"GET", "te-not-chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nok"},
	{"GET", "bare-lf", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok"},
	{"GET", "obs-fold", "HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nok"},
	{"GET", "space-in-name", "HTTP/1.1 200 OK\r\nX A: b\r\nContent-Length: 2\r\n\r\nok"},
	{"GET", "space-before-colon", "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok"},
	{"GET", "not-http", "ICY 200 OK\r\nContent-Length: 2\r\n\r\nok"},
	{"GET", "status-not-3-digits", "HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok"},
	{"GET", "two-answers", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nevil"},
	{"GET", "204-with-body", "HTTP/1.1 204 No Content\r\nContent-Length: 4\r\n\r\nevil"},
	{"GET", "304-with-body", "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nevil\r\n0\r\n\r\n"},
	{"HEAD", "head-with-body", "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nevil"},
	{"GET", "short-then-close", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"},
}

// Each wrongly framed answer reaches the client through the lean client
// as through net/http's Transport (reverse_proxy): the same status, body
// and break, a malformed head a 502, a malformed body a cut answer; and
// whatever is left of it on the connection never reaches the next
// request, which gets its own answer.
func TestLeanFramingAsNetHTTP(t *testing.T) {
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		for _, c := range framingCases {
			if r.URL.Path == "/"+c.name {
				// A name with a space before its colon is not
				// Content-Length: the body is read to the close.
				return c.answer, c.name == "short-then-close" || c.name == "space-before-colon"
			}
		}
		return "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext", false
	})
	got := map[string][]string{}
	for _, transport := range []string{"transport reverse_proxy", ""} {
		inst.behind(t, "framing", "lb_retries 0\n\t\t"+transport)
		for _, c := range framingCases {
			got[c.name] = append(got[c.name], clientSees(t, c.method, "/framing/"+c.name))
			if status, body, _ := send(t, "GET", "/framing/next"); status != 200 || body != "next" {
				t.Errorf("%q: the request after %s: %d %q", transport, c.name, status, body)
			}
		}
	}
	for _, c := range framingCases {
		if seen := got[c.name]; seen[0] != seen[1] {
			t.Errorf("%s: the client got %s through the lean client, %s through net/http's Transport", c.name, seen[1], seen[0])
		}
	}
}

// clientSees is what a client gets for method and path from the gateway,
// on a connection of its own: the status, the body and whether the
// answer broke.
func clientSees(t *testing.T, method, path string) string {
	t.Helper()
	conn := dialGateway(t)
	defer conn.Close()
	io.WriteString(conn, method+" "+path+" HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		return "no answer: " + err.Error()
	}
	body, err := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %q broke=%t", resp.StatusCode, body, err != nil)
}

// An instance that goes silent at any point ends the attempt at its
// timeout, and its connection is closed (none left open at the
// instance): silent before its head (response_header_timeout: 504),
// after its head within the body (read_timeout: the answer cut), not
// taking the request's body (read_timeout on the write: 504); and a
// client that leaves while its answer's body is stalled ends the
// attempt then (read_timeout a minute), its connection closed too.
func TestLeanSilentInstanceTimesOut(t *testing.T) {
	var mu sync.Mutex
	opened, open := 0, 0
	addr := testkit.RawServer(t, func(c net.Conn) {
		mu.Lock()
		opened++
		open++
		mu.Unlock()
		go func() {
			defer func() {
				c.Close()
				mu.Lock()
				open--
				mu.Unlock()
			}()
			r, err := http.ReadRequest(bufio.NewReader(c))
			if err != nil {
				return
			}
			switch r.URL.Path {
			case "/stall":
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
			case "/leave": // in chunks: the gateway flushes each to the client
				io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
			}
			io.Copy(io.Discard, c) // the request's body untaken, or silence; until the gateway closes
		}()
	})
	silent := func(readTimeout string) {
		loadConfig(t, gatewayConfig("registry "+newRegistry("silent"), "response_header_timeout 300ms\n\t\tread_timeout "+readTimeout+"\n\t\tlb_retries 0"))
		registerVia(t, registryURL, (&backend{name: "silent", port: addr.Port}).instance("silent"))
	}
	closedAll := func(what string) {
		t.Helper()
		testkit.Eventually(t, 5*time.Second, what+": the gateway to close its connections", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return open == 0
		})
	}
	silent("300ms")
	if got := clientSees(t, "GET", "/silent/head"); !strings.HasPrefix(got, "504 ") {
		t.Errorf("no head: %s, want 504", got)
	}
	closedAll("no head")
	if got := clientSees(t, "GET", "/silent/stall"); got != `200 "abc" broke=true` {
		t.Errorf("a stalled body: %s, want the answer cut", got)
	}
	closedAll("a stalled body")
	req, _ := http.NewRequest("POST", gatewayURL+"/silent/upload", strings.NewReader(strings.Repeat("x", 32<<20)))
	if resp, err := client.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusGatewayTimeout {
			t.Errorf("an upload the instance does not take: %d, want 504", resp.StatusCode)
		}
	} // else the gateway's server closed a connection whose body it did not read
	closedAll("an upload not taken")
	silent("1m")
	conn := dialGateway(t)
	defer conn.Close()
	io.WriteString(conn, "GET /silent/leave HTTP/1.1\r\nHost: gw\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadFull(resp.Body, make([]byte, 3)) // the body's beginning: the client then leaves
	conn.Close()
	closedAll("a client that left")
	mu.Lock()
	defer mu.Unlock()
	if opened != 4 {
		t.Errorf("the instance saw %d connections, want 4", opened)
	}
}

// Many clients at once through one instance, on connections the lean
// client keeps and reuses, each get their own answer (the instance
// echoes the path, in a body of a length that varies), with the
// uploads they sent; run it with -race.
func TestLeanConcurrentClientsGetTheirOwnAnswers(t *testing.T) {
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s", r.URL.Path, body, strings.Repeat(".", len(r.URL.Path)*97))
	}))
	t.Cleanup(inst.Close)
	loadConfig(t, gatewayConfig("registry "+newRegistry("many"), ""))
	registerVia(t, registryURL, serverBackend("m", inst).instance("many"))
	const clients, each = 16, 25
	var wg sync.WaitGroup
	errs := make(chan string, clients*each)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				path, up := fmt.Sprintf("/c%d/r%d", i, j), fmt.Sprintf("u%d-%d", i, j)
				method, body := "GET", io.Reader(nil)
				if j%3 == 0 {
					method, body = "POST", strings.NewReader(up)
				} else {
					up = ""
				}
				req, _ := http.NewRequest(method, gatewayURL+"/many"+path, body)
				resp, err := keepAlive.Do(req)
				if err != nil {
					errs <- err.Error()
					continue
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if want := fmt.Sprintf("%s %s %s", path, up, strings.Repeat(".", len(path)*97)); resp.StatusCode != 200 || string(got) != want {
					errs <- fmt.Sprintf("%s %s: %d %.40q", method, path, resp.StatusCode, got)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// An instance that answers an upload at once without taking it and
// keeps its connection open (a 401 before the body, say) has its answer
// reach the client, as through net/http's Transport, which reads while
// it writes: not a 504 at read_timeout, with the instance taken for a
// failed one.
func TestLeanAnswerBeforeAnUploadNotTaken(t *testing.T) {
	done := make(chan struct{})
	addr := testkit.RawServer(t, func(c net.Conn) {
		go func() {
			defer c.Close()
			if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nContent-Length: 7\r\n\r\nsign in")
			<-done // the body untaken, the connection open
		}()
	})
	t.Cleanup(func() { close(done) }) // before RawServer's
	for _, transport := range []string{"transport reverse_proxy", ""} {
		loadConfig(t, gatewayConfig("registry "+newRegistry("early"), "read_timeout 1m\n\t\tlb_retries 0\n\t\t"+transport))
		registerVia(t, registryURL, (&backend{name: "early", port: addr.Port}).instance("early"))
		conn := dialGateway(t)
		sent := startUpload(conn, "/early/u", 64<<20)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Errorf("%q: %v", transport, err)
		} else {
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusUnauthorized || string(body) != "sign in" {
				t.Errorf("%q: %d %q, want the instance's 401", transport, resp.StatusCode, body)
			}
		}
		conn.Close()
		<-sent
	}
}

// A client that announces a body longer than it sends and then leaves
// ends the attempt: the instance never gets a whole request, each
// connection the gateway made to it is closed (none goes back to the
// pool), and the next request gets its answer on a new one.
func TestLeanShortUploadNeverReachesTheInstanceWhole(t *testing.T) {
	var mu sync.Mutex
	var whole []string
	open := 0
	inst := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err == nil {
			mu.Lock()
			whole = append(whole, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}
		io.WriteString(w, "ok")
	}))
	inst.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open++
		case http.StateClosed:
			open--
		}
	}
	inst.Start()
	t.Cleanup(inst.Close)
	loadConfig(t, gatewayConfig("registry "+newRegistry("short"), "lb_retries 0"))
	registerVia(t, registryURL, serverBackend("s", inst).instance("short"))
	for _, size := range []int{100, 64 << 10} { // within the writer's buffer and beyond
		conn := dialGateway(t)
		io.WriteString(conn, "POST /short/u HTTP/1.1\r\nHost: gw\r\nContent-Length: "+strconv.Itoa(size)+"\r\n\r\n")
		conn.Write(make([]byte, size/2))
		conn.Close()
	}
	testkit.Eventually(t, 5*time.Second, "the gateway to close the connections it made for the short uploads", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return open == 0
	})
	if status, body, _ := send(t, "GET", "/short/next"); status != 200 || body != "ok" {
		t.Errorf("the next request: %d %q", status, body)
	}
	mu.Lock()
	defer mu.Unlock()
	testkit.Want(t, "what the instance read whole", whole, []string{"GET /next"})
}

// A gzip body the lean client un-gzips streams: a bomb (16 MiB of
// zeros in a few KiB) reaches the client whole while the instance still
// holds back its end, nothing of it kept; a body that is not gzip
// breaks the answer (it began: the client's connection is closed), as
// through net/http's Transport, and its connection is not used again.
func TestLeanGzipStreamsAndBreaks(t *testing.T) {
	const size = 16 << 20
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(make([]byte, size))
	zw.Flush() // all of it but the gzip trailer
	head := zipped.Len()
	zw.Close()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	addr := rawInstance(t, func(conn int, c net.Conn, r *http.Request) {
		switch r.URL.Path {
		case "/bomb":
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", head, zipped.Bytes()[:head])
			<-release
			fmt.Fprintf(c, "%x\r\n%s\r\n0\r\n\r\n", zipped.Len()-head, zipped.Bytes()[head:])
		case "/bad":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello")
		default:
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext")
		}
	})
	var seen []string
	for _, transport := range []string{"transport reverse_proxy", ""} {
		loadConfig(t, gatewayConfig("registry "+newRegistry("gz"), "lb_retries 0\n\t\t"+transport))
		registerVia(t, registryURL, (&backend{name: "gz", port: addr.Port}).instance("gz"))
		seen = append(seen, clientSees(t, "GET", "/gz/bad"))
		if status, body, _ := send(t, "GET", "/gz/next"); status != 200 || body != "next" {
			t.Errorf("%q: the request after a bad gzip body: %d %q", transport, status, body)
		}
	}
	if seen[0] != `200 "" broke=true` || seen[1] != seen[0] {
		t.Errorf("a body that is not gzip: %s through the lean client, %s through net/http's Transport, want the answer broken", seen[1], seen[0])
	}
	conn := dialGateway(t)
	defer conn.Close()
	io.WriteString(conn, "GET /gz/bomb HTTP/1.1\r\nHost: gw\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, size))
	if n != size || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("the bomb before its end: %d of %d bytes (%v), Content-Encoding %q", n, size, err, resp.Header.Get("Content-Encoding"))
	}
}

// An answer whose status line is not HTTP/1.x (RFC 9112 section 2.3:
// an HTTP/2.0 or HTTP/0.9 in HTTP/1 framing) is not passed on as one:
// 502, its connection closed, the next request answered on a new one.
func TestLeanRefusesAnAnswerNotHTTP1(t *testing.T) {
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		switch r.URL.Path {
		case "/2.0":
			return "HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false
		case "/0.9":
			return "HTTP/0.9 200 OK\r\nContent-Length: 2\r\n\r\nok", false
		}
		return "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 4\r\n\r\nnext", false
	})
	inst.behind(t, "versions", "lb_retries 0")
	for _, version := range []string{"2.0", "0.9"} {
		if got := clientSees(t, "GET", "/versions/"+version); !strings.HasPrefix(got, "502 ") {
			t.Errorf("an HTTP/%s answer: %s, want 502", version, got)
		}
		if status, body, _ := send(t, "GET", "/versions/next"); status != 200 || body != "next" {
			t.Errorf("the request after an HTTP/%s answer: %d %q", version, status, body)
		}
	}
	testkit.Eventually(t, 5*time.Second, "the gateway to close the two connections", func() bool { return inst.closed() == 2 })
}

// A client's Expect: 100-continue gets its 100 Continue from the
// gateway's server when the upload is read, and the instance the body
// whole and the Expect (which it may answer with a 100 Continue of its
// own, which reverse_proxy forwards and the lean client skips), as
// through net/http's Transport.
func TestLeanExpectContinue(t *testing.T) {
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "expect=%q body=%q", r.Header.Get("Expect"), body)
	}))
	t.Cleanup(inst.Close)
	for _, transport := range []string{"transport reverse_proxy", ""} {
		loadConfig(t, gatewayConfig("registry "+newRegistry("expect"), transport))
		registerVia(t, registryURL, serverBackend("e", inst).instance("expect"))
		conn := dialGateway(t)
		io.WriteString(conn, "POST /expect/u HTTP/1.1\r\nHost: gw\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusContinue {
			t.Fatalf("%q: before the body: %v %v, want 100 Continue", transport, resp, err)
		}
		io.WriteString(conn, "hello")
		for resp.StatusCode < 200 { // reverse_proxy forwards the instance's 100 too
			if resp, err = http.ReadResponse(br, nil); err != nil {
				t.Fatal(err)
			}
		}
		body, _ := io.ReadAll(resp.Body)
		conn.Close()
		if want := `expect="100-continue" body="hello"`; resp.StatusCode != 200 || string(body) != want {
			t.Errorf("%q: %d %q, want 200 %q", transport, resp.StatusCode, body, want)
		}
	}
}

// A client that leaves while its instance sends the answer in pieces,
// each coming sooner than leanAnswerLook, has the attempt aborted: the
// hook on its leaving is set once the attempt is leanAnswerLook old, not
// only when one read waits that long. The instance's pieces would go on
// for 2 s; the client leaves after the first.
func TestLeanClientLeavingWhileTheInstanceTrickles(t *testing.T) {
	const pieces = 40
	first := make(chan struct{})
	addr := rawInstance(t, func(_ int, c net.Conn, _ *http.Request) {
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", pieces)
		for i := range pieces {
			if _, err := io.WriteString(c, "x"); err != nil {
				return
			}
			if i == 0 {
				close(first)
			}
			time.Sleep(50 * time.Millisecond) // an instance that trickles
		}
	})
	l := newLeanClient(routing.Config{}.WithDefaults(), time.Now)
	defer l.close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-first; cancel() }()
	rec := httptest.NewRecorder()
	w := &statusWriter{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: rec}}
	err := l.attempt(w, httptest.NewRequest("GET", "http://gw/a", nil).WithContext(ctx), nil, addr.String())
	if err == nil || rec.Body.Len() == pieces {
		t.Fatalf("the attempt of a client that left went on to the answer's end: %d bytes, error %v", rec.Body.Len(), err)
	}
}
