package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/routing"
)

// accessLine is an access log line, as the tests read it.
type accessLine struct {
	Level   string  `json:"level"`
	TS      float64 `json:"ts"`
	Logger  string  `json:"logger"`
	Msg     string  `json:"msg"`
	Request struct {
		RemoteIP   string              `json:"remote_ip"`
		RemotePort string              `json:"remote_port"`
		Proto      string              `json:"proto"`
		Method     string              `json:"method"`
		Host       string              `json:"host"`
		URI        string              `json:"uri"`
		Headers    map[string][]string `json:"headers"`
	} `json:"request"`
	RequestID string  `json:"request_id"`
	ClientID  string  `json:"client_request_id"`
	App       string  `json:"app"`
	Subset    *string `json:"subset"`
	Instance  string  `json:"instance"`
	Retries   int     `json:"retries"`
	Limited   string  `json:"limited"`
	Breaker   string  `json:"breaker"`
	Status    int     `json:"status"`
	Size      int64   `json:"size"`
	Duration  float64 `json:"duration"`
}

// logBuffer is an io.Writer that keeps what the access log writes.
type logBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.buf.Write(p)
}

// lines returns the whole lines written so far, each parsed.
func (b *logBuffer) lines(t *testing.T) []accessLine {
	t.Helper()
	b.mu.Lock()
	text := b.buf.String()
	b.mu.Unlock()
	return parseLines(t, text)
}

func parseLines(t *testing.T, text string) []accessLine {
	t.Helper()
	var out []accessLine
	for _, l := range strings.SplitAfter(text, "\n") {
		if !strings.HasSuffix(l, "\n") {
			break
		}
		var a accessLine
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			t.Fatalf("an access log line that is not what it should be: %v\n%s", err, l)
		}
		out = append(out, a)
	}
	return out
}

// waitLines waits up to d for n lines.
func (b *logBuffer) waitLines(t *testing.T, n int, d time.Duration) []accessLine {
	t.Helper()
	var lines []accessLine
	testkit.Eventually(t, d, fmt.Sprintf("%d access log lines", n), func() bool {
		lines = b.lines(t)
		return len(lines) >= n
	})
	if len(lines) != n {
		t.Fatalf("%d access log lines, want %d", len(lines), n)
	}
	return lines
}

// One line per request on both paths (loops and fasthttp), with Caddy's
// fields: the request as the client sent it (its URI, before the gateway
// rewrote it), the status and body size the client got, and the
// gateway's own: the app, the instance that answered, the subset, the
// retries and the request id the instance got.
func TestAccessLog(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { testAccessLog(t, m.loops) })
	}
}

// hostileID is a client's X-Request-Id that the gateway replaces: a
// quote, a backslash, and more than MaxRequestIDLen bytes.
var hostileID = `a "quoted" \ id ` + strings.Repeat("x", 300)

func testAccessLog(t *testing.T, loops int) {
	store := registry.New(registry.Config{})
	var seen sync.Map // the request URI an instance got -> its X-Request-Id
	backend := func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Method+" "+r.URL.RequestURI(), r.Header.Get(routing.RequestIDHeader))
		switch r.URL.Path {
		case "/big": // of known length, over what is read at once: streams
			w.Header().Set("Content-Length", "200000")
			w.Write(bytes.Repeat([]byte("b"), 200000))
		case "/chunked":
			for range 3 {
				w.Write(bytes.Repeat([]byte("c"), 10000))
				w.(http.Flusher).Flush()
			}
		default:
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.RequestURI(), body)
		}
	}
	serve(t, store, "orders", "o1", backend)
	canary := httptest.NewServer(http.HandlerFunc(backend))
	t.Cleanup(canary.Close)
	inst := &eureka.InstanceInfo{InstanceID: "c2", HasInstanceID: true, HostName: "127.0.0.1", App: "CANARY", IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: canary.Listener.Addr().(*net.TCPAddr).Port, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}, Metadata: map[string]string{"version": "2.0"}}
	if err := store.Register(inst, false); err != nil {
		t.Fatal(err)
	}
	register(t, store, "flaky", "dead", testkit.FreePort(t))
	serve(t, store, "flaky", "live", backend)
	rules, err := routing.ParseRules("test", []byte("apps:\n  canary:\n    default: {version: \"2.0\"}\n"))
	if err != nil {
		t.Fatal(err)
	}

	var log logBuffer
	base, g, _ := startServer(t, Config{AccessLog: &log}, ServerConfig{Loops: loops}, store)
	g.Router().SetRules(rules)
	host := strings.TrimPrefix(base, "http://")

	type sent struct {
		method, uri string
		header      []string
		status      int
		size        int
	}
	var all []sent
	send := func(method, uri string, body io.Reader, header ...string) sent {
		status, _, got := do(t, method, base+uri, body, header...)
		s := sent{method: method, uri: uri, header: header, status: status, size: len(got)}
		all = append(all, s)
		return s
	}
	began := time.Now()
	if s := send("GET", "/orders/items/1?q=a%20b", nil, "User-Agent", "accesslog-test/1"); s.status != 200 {
		t.Fatalf("GET: %d", s.status)
	}
	send("GET", "/orders/items/2", nil, routing.RequestIDHeader, "client-request-id-0002")
	send("GET", "/orders/items/5", nil, routing.RequestIDHeader, hostileID)
	send("GET", "/nosuch/y", nil, routing.RequestIDHeader, "client-request-id-0003")
	send("HEAD", "/orders/items/3", nil)
	send("POST", "/orders/items/4", strings.NewReader("hello"))
	send("GET", "/orders/big", nil)
	send("GET", "/orders/chunked", nil)
	send("GET", "/nosuch/x", nil)
	send("GET", "/", nil)
	send("GET", "/canary/v", nil)
	const flaky = 6
	for n := range flaky {
		send("GET", "/flaky/"+strconv.Itoa(n), nil)
	}
	ended := time.Now()

	lines := log.waitLines(t, len(all), 5*time.Second)
	// In the order the requests were sent but that a streamed response's
	// line may come after the next request's: its body was out first.
	byRequest := map[string]accessLine{}
	for _, l := range lines {
		byRequest[l.Request.Method+" "+l.Request.URI] = l
	}
	retries := 0
	for _, s := range all {
		l, ok := byRequest[s.method+" "+s.uri]
		if !ok {
			t.Errorf("%s %s: no line", s.method, s.uri)
			continue
		}
		r := l.Request
		if l.Level != "info" || l.Logger != "http.log.access" || l.Msg != "handled request" {
			t.Errorf("%s %s: level %q, logger %q, msg %q, want Caddy's", s.method, s.uri, l.Level, l.Logger, l.Msg)
		}
		if ts := time.Unix(0, int64(l.TS*1e9)); ts.Before(began.Add(-time.Millisecond)) || ts.After(ended.Add(time.Millisecond)) {
			t.Errorf("%s %s: ts %v, not between %v and %v", s.method, s.uri, ts, began, ended)
		}
		if port, err := strconv.Atoi(r.RemotePort); r.RemoteIP != "127.0.0.1" || err != nil || port <= 0 || port > 65535 {
			t.Errorf("%s %s: remote %q port %q", s.method, s.uri, r.RemoteIP, r.RemotePort)
		}
		if r.Proto != "HTTP/1.1" || r.Method != s.method || r.Host != host || r.URI != s.uri {
			t.Errorf("%s %s: logged %s %s %s on %s, want the client's request", s.method, s.uri, r.Proto, r.Method, r.URI, r.Host)
		}
		if l.Status != s.status || l.Size != int64(s.size) || l.Duration <= 0 || l.Duration > ended.Sub(began).Seconds() {
			t.Errorf("%s %s: status %d size %d duration %v, the client got %d and %d bytes", s.method, s.uri, l.Status, l.Size, l.Duration, s.status, s.size)
		}
		want := "Go-http-client/1.1"
		if len(s.header) > 0 && s.header[0] == "User-Agent" {
			want = s.header[1]
		}
		if ua := r.Headers["User-Agent"]; len(r.Headers) != 1 || len(ua) != 1 || ua[0] != want {
			t.Errorf("%s %s: headers %v, want the User-Agent only", s.method, s.uri, r.Headers)
		}
		app, inst, subset := "ORDERS", "o1", ""
		switch {
		case s.uri == "/":
			app, inst = "", ""
		case strings.HasPrefix(s.uri, "/nosuch/"):
			app, inst = "unknown", ""
		case strings.HasPrefix(s.uri, "/canary/"):
			app, inst, subset = "CANARY", "c2", "version=2.0"
		case strings.HasPrefix(s.uri, "/flaky/"):
			app, inst = "FLAKY", "live"
			retries += l.Retries
		default:
			if l.Retries != 0 {
				t.Errorf("%s %s: %d retries", s.method, s.uri, l.Retries)
			}
		}
		if l.App != app || l.Instance != inst || (l.Subset == nil) != (subset == "") || (l.Subset != nil && *l.Subset != subset) {
			t.Errorf("%s %s: app %q instance %q subset %v, want %q %q %q", s.method, s.uri, l.App, l.Instance, l.Subset, app, inst, subset)
		}
		// The id the instance got, the client's when it sent one.
		id, ok := seen.Load(s.method + " " + strings.TrimPrefix(s.uri, "/"+strings.ToLower(app)))
		switch {
		case inst == "":
			if l.RequestID != "" {
				t.Errorf("%s %s: request id %q, answered by the gateway", s.method, s.uri, l.RequestID)
			}
		case !ok || id != l.RequestID || len(l.RequestID) == 0:
			t.Errorf("%s %s: request id %q, the instance got %q", s.method, s.uri, l.RequestID, id)
		case s.uri == "/orders/items/2" && l.RequestID != "client-request-id-0002":
			t.Errorf("%s %s: request id %q, want the client's", s.method, s.uri, l.RequestID)
		}
		// The client's id apart, when the instance got another or none.
		wantClient := map[string]string{"/orders/items/5": hostileID[:routing.MaxRequestIDLen], "/nosuch/y": "client-request-id-0003"}[s.uri]
		if l.ClientID != wantClient {
			t.Errorf("%s %s: client_request_id %.40q, want %.40q", s.method, s.uri, l.ClientID, wantClient)
		}
	}
	if retries < 1 {
		t.Errorf("%d requests to an app with a dead instance logged %d retries, want at least 1", flaky, retries)
	}
	if d := g.AccessLogDropped(); d != 0 {
		t.Errorf("%d lines dropped", d)
	}
}

// A client that leaves before its answer is logged with status 499, as
// nginx and Caddy log it (the loops notice; fasthttp answers anyway).
func TestAccessLogClientGone(t *testing.T) {
	store := registry.New(registry.Config{})
	arrived, release := serveHeld(t, store, "slow", "s1", "")
	var log logBuffer
	base, _, _ := startServer(t, Config{AccessLog: &log}, ServerConfig{Loops: 1}, store)
	c := dialRaw(t, base)
	c.send("GET /slow/x HTTP/1.1\r\nHost: gw\r\n\r\n")
	<-arrived
	c.conn.Close()
	lines := log.waitLines(t, 1, 5*time.Second)
	close(release)
	if l := lines[0]; l.Status != 499 || l.App != "SLOW" || l.Instance != "s1" || l.Request.URI != "/slow/x" || l.Size != 0 {
		t.Errorf("logged %+v, want 499 for /slow/x", l)
	}
}

// stuckWriter is an access log's Writer whose Writes wait until it is
// released.
type stuckWriter struct {
	entered chan struct{} // closed at the first Write
	release chan struct{}
	once    sync.Once
	logBuffer
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	return w.logBuffer.Write(p)
}

// A Writer that blocks delays no request: the lines that do not fit in
// the queue are dropped and counted, and once it is released the lines
// queued are written; each request is logged or counted as dropped.
func TestAccessLogDropsWhileTheWriterIsStuck(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { testAccessLogStuck(t, m.loops) })
	}
}

func testAccessLogStuck(t *testing.T, loops int) {
	store := registry.New(registry.Config{})
	serve(t, store, "orders", "o1", named("o1"))
	w := &stuckWriter{entered: make(chan struct{}), release: make(chan struct{})}
	const buffer = 16 << 10 // some 40 lines
	base, g, _ := startServer(t, Config{AccessLog: w, AccessLogBuffer: buffer}, ServerConfig{Loops: loops}, store)
	released := false
	unstick := func() {
		if !released {
			released = true
			close(w.release)
		}
	}
	t.Cleanup(unstick) // before the server stops and the gateway closes

	if status, _, _ := do(t, "GET", base+"/orders/first", nil); status != 200 {
		t.Fatalf("first request: %d", status)
	}
	select {
	case <-w.entered:
	case <-time.After(2 * time.Second):
		t.Fatal("the writer did not write the first line within 2s")
	}

	// 2,000 requests from 4 clients on kept-alive connections while the
	// writer is stuck.
	const n, workers = 2000, 4
	tr := &http.Transport{MaxIdleConnsPerHost: workers}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var slowest atomic.Int64
	var failed atomic.Int32
	start := time.Now()
	testkit.InParallel(workers, func(wn int) {
		for i := wn; i < n; i += workers {
			t0 := time.Now()
			resp, err := c.Get(base + "/orders/" + strconv.Itoa(i))
			if err != nil {
				failed.Add(1)
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				failed.Add(1)
			}
			if d := int64(time.Since(t0)); d > slowest.Load() {
				slowest.Store(d)
			}
		}
	})
	total := time.Since(start)
	t.Logf("%d requests in %v with the writer stuck, the slowest %v; %d lines dropped", n, total, time.Duration(slowest.Load()), g.AccessLogDropped())
	if failed.Load() > 0 {
		t.Errorf("%d requests failed", failed.Load())
	}
	if s := time.Duration(slowest.Load()); s > 2*time.Second || total > 30*time.Second {
		t.Errorf("with the writer stuck the requests took %v, the slowest %v", total, s)
	}
	dropped := g.AccessLogDropped()
	if dropped == 0 || dropped > n {
		t.Errorf("%d lines dropped, want some of %d", dropped, n)
	}

	// Released, the writer writes the first line and those queued;
	// every request is written or dropped.
	unstick()
	testkit.Eventually(t, 5*time.Second, "the queued lines written", func() bool {
		return uint64(len(w.lines(t)))+g.AccessLogDropped() == n+1
	})
	lines := w.lines(t)
	if len(lines) < 2 || lines[0].Request.URI != "/orders/first" || lines[1].Status != 200 {
		t.Errorf("%d lines written, the first two %+v", len(lines), lines[:min(2, len(lines))])
	}
	if q := len(lines) - 1; q*200 > buffer || q*600 < buffer {
		t.Errorf("%d lines were queued in %d bytes", q, buffer)
	}
}

// The lines reach a file within a second, without waiting for more.
func TestAccessLogFileWithinASecond(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := registry.New(registry.Config{})
			serve(t, store, "orders", "o1", named("o1"))
			path := filepath.Join(t.TempDir(), "access.log")
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() }) // after the gateway's Close
			base, _, _ := startServer(t, Config{AccessLog: f}, ServerConfig{Loops: m.loops}, store)
			for n := range 3 {
				if status, _, _ := do(t, "GET", base+"/orders/"+strconv.Itoa(n), nil); status != 200 {
					t.Fatalf("GET: %d", status)
				}
				answered := time.Now()
				var lines []accessLine
				for time.Since(answered) < time.Second && len(lines) <= n {
					time.Sleep(5 * time.Millisecond)
					data, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					lines = parseLines(t, string(data))
				}
				if len(lines) != n+1 || lines[n].Request.URI != "/orders/"+strconv.Itoa(n) {
					t.Fatalf("%d lines in the file a second after request %d was answered, want %d", len(lines), n, n+1)
				}
			}
		})
	}
}

// lineBench is what the allocation test and the benchmark log: a
// request of a common size.
func lineBench(tb testing.TB, w io.Writer, buffer int) (*Gateway, *fasthttp.RequestHeader, net.Addr, *routing.Route, *eureka.InstanceInfo) {
	tb.Helper()
	g, err := New(Config{Routing: routing.Config{Instances: registry.New(registry.Config{})}, AccessLog: w, AccessLogBuffer: buffer})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.Close() })
	var h fasthttp.RequestHeader
	raw := "GET /orders/items/12345?expand=lines&page=2 HTTP/1.1\r\nHost: gateway.example.com:8080\r\n" +
		"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36\r\n" +
		"X-Request-Id: 0123456789abcdef0123456789abcdef\r\nAccept: */*\r\n\r\n"
	if err := h.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		tb.Fatal(err)
	}
	remote := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 53122}
	rt := &routing.Route{App: "ORDERS", Registered: true}
	inst := &eureka.InstanceInfo{InstanceID: "orders-7f9c-1", HasInstanceID: true, App: "ORDERS"}
	return g, &h, remote, rt, inst
}

// A request logged on either path allocates nothing once the pools and
// the queue have grown: the fasthttp path's line comes from a pool, the
// loops' from the exchange.
func TestAccessLogLineAllocs(t *testing.T) {
	g, h, remote, rt, inst := lineBench(t, io.Discard, 0)
	var own logLine
	for _, c := range []struct {
		name string
		own  *logLine
	}{{"pooled", nil}, {"the exchange's", &own}} {
		line := func() {
			var o observed
			g.begin(&o, h, remote, c.own)
			g.observe(&o, rt)
			o.attempt(inst)
			o.done(h, 200, 1234)
		}
		for range 5000 {
			line() // the queue grows to its size
		}
		if n := testing.AllocsPerRun(2000, line); n != 0 {
			t.Errorf("%s: %v allocations a line", c.name, n)
		}
	}
	var buf logBuffer
	g, h, remote, rt, inst = lineBench(t, &buf, 0)
	var o observed
	g.begin(&o, h, remote, nil)
	g.observe(&o, rt)
	o.attempt(inst)
	o.done(h, 200, 1234)
	g.Close()
	lines := buf.lines(t)
	if len(lines) != 1 || lines[0].RequestID != "0123456789abcdef0123456789abcdef" || lines[0].Instance != "orders-7f9c-1" {
		t.Errorf("lines %+v", lines)
	}
	t.Logf("%d bytes: %s", buf.buf.Len(), buf.buf.String())
}

// BenchmarkAccessLog is a request's observation with the traffic
// counters alone, and with the access log too (written to io.Discard).
// Each goroutine yields every 64 requests, as a server's do at their
// reads, so that the writer runs.
func BenchmarkAccessLog(b *testing.B) {
	for _, c := range []struct {
		name string
		w    io.Writer
	}{{"off", nil}, {"on", io.Discard}} {
		b.Run(c.name, func(b *testing.B) {
			g, h, remote, rt, inst := lineBench(b, c.w, 0)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for n := 0; pb.Next(); n++ {
					if n%64 == 0 {
						runtime.Gosched()
					}
					var o observed
					g.begin(&o, h, remote, nil)
					g.observe(&o, rt)
					o.attempt(inst)
					o.done(h, 200, 1234)
				}
			})
			if d := g.AccessLogDropped(); d > 0 {
				b.Logf("%d of %d lines dropped", d, b.N)
			}
		})
	}
}
