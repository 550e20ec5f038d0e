package gatewaysuite

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// rawCase is a request written byte for byte, and what must come of it:
// the gateway's status, and which instance gets it and what it sees.
type rawCase struct {
	name string
	// req is the request; {host} stands for the gateway's host:port.
	req    string
	status int
	// reach is the app whose instance must get the request; "" for none:
	// no instance may get it.
	reach string
	// check looks at what the instance saw.
	check func(t *testing.T, s seen, host string)
	// fasthttpOnly marks a case of the fasthttp gateway's own parser or
	// its body limit (Caddy has none by default); Caddy's parser is Go's,
	// which decides those for itself.
	fasthttpOnly bool
	// interim is the informational answer that must come before the
	// response, if any.
	interim int
}

// rawCases are the requests an attacker with raw sockets tried, and what
// a gateway as strict as nginx answers.
var rawCases = []rawCase{
	// 200 MiB declared, and the 8 KiB that fasthttp reads before its
	// handler runs sent: the answer must come without the rest, which a
	// gateway that took the length for 0 would buffer whole.
	{name: "ConnectionNamesContentLength", status: 413, fasthttpOnly: true,
		req: "POST /SINK/up HTTP/1.1\r\nHost: {host}\r\nContent-Length: 209715200\r\nConnection: Content-Length\r\n\r\n" +
			strings.Repeat("x", 8<<10)},
	{name: "ConnectionNamesTransferEncoding", status: 200, reach: "SINK",
		req:   "POST /SINK/up HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\nConnection: Transfer-Encoding\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		check: func(t *testing.T, s seen, _ string) { expect(t, "body", s.Body, "hello") }},
	{name: "ConnectionNamesHost", status: 200, reach: "ECHO",
		req: "GET /ECHO/x HTTP/1.1\r\nHost: {host}\r\nConnection: Host\r\n\r\n",
		check: func(t *testing.T, s seen, host string) {
			expect(t, "Host", s.Host, host)
			expect(t, "X-Forwarded-Host", s.Header.Values("X-Forwarded-Host"), []string{host})
		}},
	{name: "DuplicatedForwardedHeaders", status: 200, reach: "ECHO",
		req: "GET /ECHO/x HTTP/1.1\r\nHost: {host}\r\nX-Forwarded-For: 6.6.6.6\r\nX-Forwarded-For: 7.7.7.7\r\n" +
			"X-Forwarded-Proto: https\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: a.example\r\nX-Forwarded-Host: b.example\r\n" +
			"X-Forwarded-Prefix: /p\r\nX-Forwarded-Prefix: /q\r\n\r\n",
		check: func(t *testing.T, s seen, host string) {
			expect(t, "X-Forwarded-For", s.Header.Values("X-Forwarded-For"), []string{"127.0.0.1"})
			expect(t, "X-Forwarded-Proto", s.Header.Values("X-Forwarded-Proto"), []string{"http"})
			expect(t, "X-Forwarded-Host", s.Header.Values("X-Forwarded-Host"), []string{host})
			expect(t, "X-Forwarded-Prefix", s.Header.Values("X-Forwarded-Prefix"), []string{"/ECHO"})
		}},
	{name: "ClientClaimsAndUnderscores", status: 200, reach: "ECHO",
		req: "GET /ECHO/x HTTP/1.1\r\nHost: {host}\r\nX_Forwarded_For: 6.6.6.6\r\nForwarded: for=6.6.6.6;proto=https\r\n" +
			"X-Real-IP: 6.6.6.6\r\nX-Forwarded-Port: 443\r\nX-Forwarded-Ssl: on\r\nTrue-Client-IP: 6.6.6.6\r\nX-Kept: yes\r\n\r\n",
		check: func(t *testing.T, s seen, _ string) {
			for k, v := range s.Header {
				if strings.Contains(k, "_") || strings.Contains(strings.Join(v, ","), "6.6.6.6") {
					t.Errorf("the instance got %s: %q", k, v)
				}
			}
			for _, h := range []string{"Forwarded", "X-Real-Ip", "X-Forwarded-Port", "X-Forwarded-Ssl", "True-Client-Ip"} {
				if v, ok := s.Header[h]; ok {
					t.Errorf("the instance got %s: %q", h, v)
				}
			}
			expect(t, "X-Kept", s.Header.Get("X-Kept"), "yes")
			expect(t, "X-Forwarded-For", s.Header.Values("X-Forwarded-For"), []string{"127.0.0.1"})
		}},
	{name: "TrailerNamedForwarded", status: 200, reach: "ECHO",
		req: "POST /ECHO/x HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\nTrailer: Forwarded\r\n\r\n" +
			"3\r\nabc\r\n0\r\nForwarded: for=6.6.6.6\r\n\r\n",
		check: func(t *testing.T, s seen, _ string) {
			expect(t, "body", s.Body, "abc")
			if len(s.Trailer) > 0 {
				t.Errorf("the instance got trailers %v", s.Trailer)
			}
		}},

	// Routing: what a normalising front proxy sees is where it goes.
	{name: "DotlessI", status: 503, req: "GET /adm\xc4\xb1n/x HTTP/1.1\r\nHost: {host}\r\n\r\n"},
	{name: "LongS", status: 503, req: "GET /\xc5\xbfink/x HTTP/1.1\r\nHost: {host}\r\n\r\n"},
	{name: "EscapedDotlessI", status: 503, req: "GET /adm%C4%B1n/x HTTP/1.1\r\nHost: {host}\r\n\r\n"},
	{name: "DotSegments", status: 200, reach: "ECHO", req: "GET /ADMIN/../ECHO/x?q=/../y HTTP/1.1\r\nHost: {host}\r\n\r\n",
		check: func(t *testing.T, s seen, _ string) {
			expect(t, "path", s.Path, "/x")
			expect(t, "query", s.Query, "q=/../y")
		}},
	{name: "EncodedDotSegments", status: 200, reach: "ADMIN", req: "GET /ECHO/%2e%2E/ADMIN/x HTTP/1.1\r\nHost: {host}\r\n\r\n",
		check: func(t *testing.T, s seen, _ string) { expect(t, "path", s.Path, "/x") }},
	{name: "DotSegmentsInTheRest", status: 200, reach: "ADMIN", req: "GET /ECHO/a/../../ADMIN/./y HTTP/1.1\r\nHost: {host}\r\n\r\n",
		check: func(t *testing.T, s seen, _ string) { expect(t, "path", s.Path, "/y") }},
	{name: "LowerCaseName", status: 200, reach: "ECHO", req: "GET /echo/x HTTP/1.1\r\nHost: {host}\r\n\r\n"},
	// Go re-escapes the decoded path when the target has a "{": the
	// name is still read as the client wrote it.
	{name: "EscapedNameWithBrace", status: 503, req: "GET /%41DMIN/x{ HTTP/1.1\r\nHost: {host}\r\n\r\n"},
	{name: "EscapedSlashWithBrace", status: 503, req: "GET /PUBLIC%2f..%2fADMIN/x{ HTTP/1.1\r\nHost: {host}\r\n\r\n"},
	// Removing headers keeps the order of those left (RFC 9110 section
	// 5.3 makes the order of repeated fields significant).
	{name: "RepeatedFieldsKeepTheirOrder", status: 200, reach: "ECHO",
		req: "GET /ECHO/x HTTP/1.1\r\nHost: {host}\r\nX-A: 1\r\nX-Forwarded-For: 9.9.9.9\r\nX-A: 2\r\nKeep-Alive: 5\r\n" +
			"X_Y: 1\r\nForwarded: for=9.9.9.9\r\nX-A: 3\r\nX-Forwarded-For: 8.8.8.8\r\nVia: 1 a\r\nVia: 1 b\r\n\r\n",
		check: func(t *testing.T, s seen, _ string) {
			expect(t, "X-A", s.Header.Values("X-A"), []string{"1", "2", "3"})
			if via := s.Header.Values("Via"); len(via) < 2 || via[0] != "1 a" || via[1] != "1 b" {
				t.Errorf("Via = %q, want 1 a, 1 b first", via)
			}
		}},

	// Requests nginx refuses.
	{name: "HostWithPath", status: 400, req: "GET /ECHO/x HTTP/1.1\r\nHost: evil.com/path\r\n\r\n"},
	{name: "HostWithSpace", status: 400, req: "GET /ECHO/x HTTP/1.1\r\nHost: a b\r\n\r\n"},
	{name: "HostWithMarkup", status: 400, req: "GET /ECHO/x HTTP/1.1\r\nHost: <script>x</script>\r\n\r\n"},
	{name: "HostOpenBracket", status: 400, req: "GET /ECHO/x HTTP/1.1\r\nHost: [::1\r\n\r\n"},
	{name: "HostTwoPorts", status: 400, req: "GET /ECHO/x HTTP/1.1\r\nHost: a:1:2\r\n\r\n"},
	{name: "HostFolded", status: 400, fasthttpOnly: true, req: "GET /ECHO/x HTTP/1.1\r\nHost: a\r\n b\r\n\r\n"},
	{name: "TwoHosts", status: 400, req: "GET /ECHO/x HTTP/1.1\r\nHost: {host}\r\nHost: evil.example\r\n\r\n"},
	{name: "HTTP20", status: 505, req: "GET /ECHO/x HTTP/2.0\r\nHost: {host}\r\n\r\n"},
	{name: "HTTP99", status: 505, req: "GET /ECHO/x HTTP/9.9\r\nHost: {host}\r\n\r\n"},
	// Go's parser replaces a fold with a space, as RFC 9112 section
	// 5.2 lets a proxy do instead of refusing.
	{name: "ObsFold", status: 400, fasthttpOnly: true, req: "GET /ECHO/x HTTP/1.1\r\nHost: {host}\r\nX-A: 1\r\n 2\r\n\r\n"},
	{name: "SpaceInName", status: 400, req: "GET /ECHO/x HTTP/1.1\r\nHost: {host}\r\nX A: 1\r\n\r\n"},
	{name: "Fragment", status: 400, req: "GET /ECHO/x#frag HTTP/1.1\r\nHost: {host}\r\n\r\n", fasthttpOnly: true},
	{name: "BadEscape", status: 400, req: "GET /ECHO/%zz HTTP/1.1\r\nHost: {host}\r\n\r\n"},
	// A header that ends in bare line feeds: the fasthttp gateway's two
	// paths differ there (gateway.TestBareLineFeeds).
	{name: "ExpectOnBodilessGet", status: 200, reach: "ECHO", interim: 100, fasthttpOnly: true,
		req: "GET /ECHO/x HTTP/1.1\r\nHost: {host}\r\nExpect: 100-continue\r\n\r\n"},
}

// rawRequests sends each of rawCases on a connection of its own.
func rawRequests(t *testing.T, start Starter, gw Gateway) {
	base, store, _ := start(t)
	host := strings.TrimPrefix(base, "http://")
	// hits counts the bytes the instances read: a request their HTTP
	// server refuses (HTTP/2.0, a bad header name) reaches no handler.
	var hits atomic.Int64
	for _, app := range []string{"ADMIN", "ECHO", "SINK"} {
		srv := httptest.NewUnstartedServer(echoHandler(app))
		srv.Listener = countingListener{srv.Listener, &hits}
		srv.Start()
		t.Cleanup(srv.Close)
		register(t, store, instance(app, strings.ToLower(app), srv.Listener.Addr().(*net.TCPAddr).Port))
	}
	for _, c := range rawCases {
		if c.fasthttpOnly && gw == Caddy {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			before := hits.Load()
			interim, resp, body := sendRaw(t, host, strings.ReplaceAll(c.req, "{host}", host))
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %q", resp.StatusCode, c.status, body)
			}
			if c.interim != 0 && interim != c.interim {
				t.Errorf("informational answer %d, want %d", interim, c.interim)
			}
			if c.reach == "" {
				if n := hits.Load() - before; n != 0 {
					t.Errorf("%d bytes reached an instance: %q", n, body)
				}
				return
			}
			var s seen
			if err := json.Unmarshal([]byte(body), &s); err != nil {
				t.Fatalf("not an instance's answer: %q", body)
			}
			expect(t, "instance", s.Name, c.reach)
			if c.check != nil {
				c.check(t, s, host)
			}
		})
	}
}

// countingListener counts the bytes its connections read.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.n}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// dialDeadline connects to hostport, giving up after 5 s, and sets the
// connection's deadline d from now; it fails the test if it cannot
// connect.
func dialDeadline(t *testing.T, hostport string, d time.Duration) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", hostport, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(d))
	return conn
}

// sendRaw writes req on a new connection to host and reads the answer:
// the informational status that came first (0 for none), the response and
// its body.
func sendRaw(t *testing.T, host, req string) (int, *http.Response, string) {
	t.Helper()
	conn := dialDeadline(t, host, 10*time.Second)
	defer conn.Close()
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	interim := 0
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 {
			interim = resp.StatusCode
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return interim, resp, string(b)
	}
}

// The instance connections a gateway pools never carry bytes from one
// response into another: an instance that sends a body on HEAD, or bytes
// after its response, has its connection closed, and the next client
// gets its own answer.
func noStrayBytes(t *testing.T, start Starter, _ Gateway) {
	base, store, _ := start(t)
	stray := make(chan struct{}, 16)
	faulty := testkit.RawServer(t, func(c net.Conn) { go FaultyInstance(c, stray) })
	register(t, store, instance("faulty", "f", faulty.Port))

	// A body on HEAD, in the same write as the header.
	req, _ := http.NewRequest("HEAD", base+"/faulty/head", nil)
	if resp, err := client().Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	expect(t, "after HEAD", get(t, base+"/faulty/one").body, "answer to /one")

	// Bytes that come a moment after a response.
	expect(t, "late", get(t, base+"/faulty/late").body, "answer to /late")
	select {
	case <-stray:
	case <-time.After(5 * time.Second):
		t.Fatal("the instance did not send its stray bytes")
	}
	expect(t, "after stray bytes", get(t, base+"/faulty/two").body, "answer to /two")
}

// FaultyInstance answers on c until it closes: HEAD with a body, GET
// /late with its answer and, after it, an unasked-for response (it says
// on stray when it has sent it), and any other GET with "answer to PATH".
func FaultyInstance(c net.Conn, stray chan<- struct{}) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		answer := "answer to " + req.URL.Path
		if req.Method == "HEAD" {
			answer = "STRAY"
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(answer), answer)
		if req.URL.Path == "/late" {
			time.Sleep(50 * time.Millisecond)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nPOISON")
			stray <- struct{}{}
		}
	}
}
