package caddymodule

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
