package gatewaysuite

import (
	"bufio"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// Starter starts a gateway routing by a fresh, empty registry and returns
// the gateway's base URL (http://127.0.0.1:port), the registry's Store,
// and the gateway's traffic Metrics: for the fasthttp gateway, a
// traffic/metrics.Traffic of its Traffic and its balancer, namespace
// "eureka", gathered in process; in Caddy, the admin endpoint's /metrics,
// namespace "caddy_eureka". The gateway stops when the test ends.
//
// Every Starter gives its gateway the suite's settings: it waits
// ResponseHeaderTimeout for an instance's response header and ReadTimeout
// while a response body streams (never in a tunnel), runs active
// health checks of the instances' healthCheckUrl every HealthInterval,
// trusts the certificate authority in the file TrustedCA(t) returns
// for instances reached on their secure port, and puts the traffic rules
// document Rules in force (the fasthttp gateway's through
// routing.ParseRules, eureka_gateway's as its "rules" field). It trusts no
// client as a proxy: no client's X-Forwarded-* or RouteHeader stands. Its
// registry serves the remote region Region, which the gateway fails over
// to.
type Starter func(t *testing.T) (string, *registry.Store, Metrics)

// Gateway says which gateway the suite runs against, for the few cases
// that belong to one.
type Gateway int

const (
	// FastHTTP is the fasthttp gateway (package gateway), either path.
	FastHTTP Gateway = iota
	// Caddy is Caddy's eureka_gateway.
	Caddy
)

// Run runs the suite against the gateway start makes. The traffic cases
// (traffic.go) read its Metrics before and after their requests and check
// what rose.
func Run(t *testing.T, start Starter, gw Gateway) {
	for _, c := range []struct {
		name string
		test func(*testing.T, Starter)
	}{
		{"RoundRobinByName", roundRobinByName},
		{"Unavailable", unavailable},
		{"HopByHopHeaders", hopByHopHeaders},
		{"ForwardedHeaders", forwardedHeaders},
		{"StreamedBodies", streamedBodies},
		{"WebSocketEcho", webSocketEcho},
		{"RetryAfterRefusedConnection", retryAfterRefused},
		{"HungInstanceBlocksNoOther", hungInstance},
		{"QuietWebSocket", quietWebSocket},
		{"InterimAnswerThenHang", interimThenHang},
		{"SecureInstanceClosesIdleConnections", secureIdleClosed},
		{"RawRequests", func(t *testing.T, s Starter) { rawRequests(t, s, gw) }},
		{"NoStrayBytes", func(t *testing.T, s Starter) { noStrayBytes(t, s, gw) }},
		{"UnknownApp", unknownApp},
		{"NoUPInstance", noUPInstance},
		{"FailingHealthChecks", failingHealthChecks},
		{"SecurePortOnly", securePortOnly},
		{"RetryAfterTimeoutByMethod", retryAfterTimeoutByMethod},
		{"RetryAfterRefusedPOST", retryAfterRefusedPOST},
		{"RulesHeaderMatch", rulesHeaderMatch},
		{"RulesWeightedSplit", rulesWeightedSplit},
		{"RulesSticky", rulesSticky},
		{"RulesDefault", rulesDefault},
		{"RulesFallback", rulesFallback},
		{"RulesChain", rulesChain},
		{"RulesOutsideRoute", rulesOutsideRoute},
		{"RulesRegexBounded", rulesRegexBounded},
		{"LimitFlood", limitFlood},
		{"LimitPerClient", limitPerClient},
		{"LimitHeaderAbsent", limitHeaderAbsent},
		{"BreakerOpensAndCloses", breakerOpensAndCloses},
		{"BreakerSlow", breakerSlow},
		{"RetryBudget", retryBudget},
		{"LimitThenBreaker", limitThenBreaker},
		{"BreakerPerSubset", breakerPerSubset},
		{"TrafficRequestCounts", trafficCounts},
		{"TrafficRefusedInstance", trafficRefused},
		{"TrafficUnknownAppsOneLabel", trafficUnknownApps},
		{"TraceContextAndRequestID", traceContext},
		{"RequestIDs", requestIDs},
		{"RegionFailover", regionFailover},
		{"EjectionKeyedByApp", ejectionKeyedByApp},
		{"EjectionKeyedByRegion", ejectionKeyedByRegion},
		{"HealthKeyedByRegion", healthKeyedByRegion},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, start) })
	}
}

// /<app>/<rest> goes to /<rest> (query kept) on the app's instances in
// turn, the app name matched case-insensitively.
func roundRobinByName(t *testing.T, start Starter) {
	base, store, _ := start(t)
	a, b := newBackend(t, "a", nil), newBackend(t, "b", nil)
	register(t, store, instance("orders", "a", a.port))
	register(t, store, instance("orders", "b", b.port))
	if got := names(t, base+"/orders/items/7", 6); !alternates(got, "a", "b") {
		t.Errorf("not alternating: %v", got)
	}
	if got := names(t, base+"/ORDERS/items/7", 4); !alternates(got, "a", "b") {
		t.Errorf("upper-case app name: %v", got)
	}
	s := decode(t, get(t, base+"/Orders/items/7?x=1&y=%2F"))
	expect(t, "path", s.Path, "/items/7")
	expect(t, "query", s.Query, "x=1&y=%2F")
	expect(t, "path of /orders", decode(t, get(t, base+"/orders")).Path, "/")

	// A cancelled instance takes no more requests.
	store.Cancel("ORDERS", "a", false)
	for _, n := range names(t, base+"/orders/x", 3) {
		expect(t, "after a is cancelled", n, "b")
	}
}

// An unknown application, and one without an UP instance, are answered
// 503 with a plain-text reason.
func unavailable(t *testing.T, start Starter) {
	base, store, _ := start(t)
	r := get(t, base+"/nope/x")
	expect(t, "unknown app status", r.status, 503)
	expect(t, "unknown app body", r.body, "no application \"nope\" is registered\n")
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("content type %q", ct)
	}
	a := newBackend(t, "a", nil)
	down := instance("orders", "a", a.port)
	down.Status = eureka.StatusDown
	register(t, store, down)
	r = get(t, base+"/orders/x")
	expect(t, "no UP instance status", r.status, 503)
	expect(t, "no UP instance body", r.body, "application \"orders\" has no UP instance\n")
}

// Hop-by-hop headers, those a Connection header names included, do not
// cross the gateway in either direction; end-to-end ones do.
func hopByHopHeaders(t *testing.T, start Starter) {
	base, store, _ := start(t)
	a := newBackend(t, "a", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Connection", "X-Hop-Resp")
		h.Set("X-Hop-Resp", "1")
		h.Set("Keep-Alive", "timeout=5")
		h.Set("Proxy-Authenticate", "Basic")
		h.Set("X-End-Resp", "1")
		echoHandler("a").ServeHTTP(w, r)
	}))
	register(t, store, instance("orders", "a", a.port))

	// A raw request, so that the client library adds and removes nothing.
	conn := dialDeadline(t, strings.TrimPrefix(base, "http://"), 10*time.Second)
	defer conn.Close()
	fmt.Fprintf(conn, "GET /orders/h HTTP/1.1\r\nHost: %s\r\n"+
		"Connection: X-Hop-Req, keep-alive\r\nX-Hop-Req: secret\r\nKeep-Alive: timeout=5\r\n"+
		"Proxy-Authorization: Basic eDp5\r\nProxy-Connection: keep-alive\r\nTe: deflate\r\nUpgrade: h2c\r\n"+
		"X-End: kept\r\n\r\n", strings.TrimPrefix(base, "http://"))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	s := decode(t, reply{resp.StatusCode, resp.Header, string(body)})
	for _, h := range []string{"X-Hop-Req", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "Te", "Upgrade"} {
		if v, ok := s.Header[h]; ok {
			t.Errorf("the instance got %s: %q", h, v)
		}
	}
	if c := s.Header.Get("Connection"); strings.Contains(strings.ToLower(c), "x-hop") {
		t.Errorf("the instance got Connection: %q", c)
	}
	expect(t, "X-End", s.Header.Get("X-End"), "kept")
	for _, h := range []string{"X-Hop-Resp", "Keep-Alive", "Proxy-Authenticate"} {
		if v, ok := resp.Header[h]; ok {
			t.Errorf("the client got %s: %q", h, v)
		}
	}
	if c := resp.Header.Get("Connection"); strings.Contains(strings.ToLower(c), "x-hop") {
		t.Errorf("the client got Connection: %q", c)
	}
	expect(t, "X-End-Resp", resp.Header.Get("X-End-Resp"), "1")
}

// X-Forwarded-For, -Proto and -Host describe the client's request, and
// replace what an untrusted client claims; Host passes through.
func forwardedHeaders(t *testing.T, start Starter) {
	base, store, _ := start(t)
	a := newBackend(t, "a", nil)
	register(t, store, instance("orders", "a", a.port))
	host := strings.TrimPrefix(base, "http://")
	s := decode(t, get(t, base+"/orders/f", "X-Forwarded-For", "203.0.113.9", "X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https"))
	expect(t, "X-Forwarded-For", s.Header.Values("X-Forwarded-For"), []string{"127.0.0.1"})
	expect(t, "X-Forwarded-Proto", s.Header.Values("X-Forwarded-Proto"), []string{"http"})
	expect(t, "X-Forwarded-Host", s.Header.Values("X-Forwarded-Host"), []string{host})
	expect(t, "Host", s.Host, host)
}

const bigBody = 50 << 20

// pattern is an endless, cheap, non-constant byte stream.
type pattern struct{ n byte }

func (p *pattern) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = p.n
		p.n = p.n*31 + 7
	}
	return len(b), nil
}

// A 50 MB upload and a 50 MB download cross the gateway intact, and the
// process's heap grows by far less than a body while they do: the bodies
// are streamed, not buffered. (The client and the instance run in this
// process too, and stream as well.)
func streamedBodies(t *testing.T, start Starter) {
	base, store, _ := start(t)
	a := newBackend(t, "a", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case "POST":
			h := crc32.NewIEEE()
			n, err := io.Copy(h, r.Body)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			fmt.Fprintf(w, "%d %08x", n, h.Sum32())
		default:
			w.Header().Set("Content-Length", strconv.Itoa(bigBody))
			io.Copy(w, io.LimitReader(&pattern{}, bigBody))
		}
	}))
	register(t, store, instance("files", "a", a.port))
	want := crc32.NewIEEE()
	io.Copy(want, io.LimitReader(&pattern{}, bigBody))
	wantSum := fmt.Sprintf("%d %08x", bigBody, want.Sum32())

	growth := testkit.HeapGrowth(func() {
		req, _ := http.NewRequest("POST", base+"/files/upload", io.LimitReader(&pattern{}, bigBody))
		req.ContentLength = bigBody
		resp, err := client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(got) != wantSum {
			t.Errorf("upload: %d %q, want %q", resp.StatusCode, got, wantSum)
		}

		resp, err = client().Get(base + "/files/download")
		if err != nil {
			t.Fatal(err)
		}
		h := crc32.NewIEEE()
		n, err := io.Copy(h, resp.Body)
		resp.Body.Close()
		if got := fmt.Sprintf("%d %08x", n, h.Sum32()); err != nil || resp.StatusCode != 200 || got != wantSum {
			t.Errorf("download: %d %q %v, want %q", resp.StatusCode, got, err, wantSum)
		}
	})
	t.Logf("heap growth while streaming 2 x %d MB: %.1f MB", bigBody>>20, float64(growth)/(1<<20))
	if growth > bigBody/2 {
		t.Errorf("the heap grew by %d MB while streaming %d MB bodies", growth>>20, bigBody>>20)
	}
}

// A WebSocket handshake and messages cross the gateway both ways.
func webSocketEcho(t *testing.T, start Starter) {
	base, store, _ := start(t)
	a := newBackend(t, "a", wsEcho(t))
	register(t, store, instance("chat", "a", a.port))
	wsRoundTrip(t, strings.TrimPrefix(base, "http://"), "/chat/ws", []string{"hello", strings.Repeat("x", 70000), "bye"})
}

// A request to an instance that refuses connections is retried on
// another, and the next requests avoid it.
func retryAfterRefused(t *testing.T, start Starter) {
	base, store, _ := start(t)
	live := newBackend(t, "live", nil)
	register(t, store, instance("payments", "dead", testkit.FreePort(t)))
	register(t, store, instance("payments", "live", live.port))
	for _, n := range names(t, base+"/payments/p", 6) {
		expect(t, "answered by", n, "live")
	}
}

// Requests to an instance that accepts them and never answers do not hold
// up those to the other instances.
func hungInstance(t *testing.T, start Starter) {
	base, store, _ := start(t)
	release := make(chan struct{})
	var releaseOnce sync.Once
	hung := newBackend(t, "hung", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		echoHandler("hung").ServeHTTP(w, r)
	}))
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	live := newBackend(t, "live", nil)
	register(t, store, instance("search", "hung", hung.port))
	register(t, store, instance("search", "live", live.port))

	const n = 6
	answers := make(chan reply, n)
	for range n {
		go func() {
			r, err := ask(client(), base+"/search/q")
			if err != nil {
				r = reply{body: err.Error()}
			}
			answers <- r
		}()
	}
	liveAnswers := 0
	timeout := time.After(5 * time.Second)
	for liveAnswers < n/2 {
		select {
		case r := <-answers:
			if s := decode(t, r); s.Name != "live" {
				t.Fatalf("answered by %s while the hung instance holds its requests", s.Name)
			}
			liveAnswers++
		case <-timeout:
			t.Fatalf("%d of %d requests to the live instance answered in 5 s", liveAnswers, n/2)
		}
	}
	// Those held by the hung instance are still waiting; release them.
	releaseOnce.Do(func() { close(release) })
	for range n - n/2 {
		select {
		case <-answers:
		case <-time.After(10 * time.Second):
			t.Fatal("a request to the released instance did not end")
		}
	}
}
