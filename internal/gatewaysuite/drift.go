package gatewaysuite

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// The cases in this file pin down, byte for byte, what the two gateways
// answer where they could easily drift apart: the answers the gateway
// makes itself, active health checks, secure ports, and which failed
// requests are retried on another instance.

// ResponseHeaderTimeout is how long the gateway waits for an instance's
// response header.
const ResponseHeaderTimeout = 500 * time.Millisecond

// ReadTimeout is how long the gateway lets an instance be silent while
// its response body streams.
const ReadTimeout = time.Second

// HealthInterval is how often the gateway's active health checks request
// the instances' healthCheckUrl.
const HealthInterval = 100 * time.Millisecond

// plainText is the Content-Type of every answer the gateway makes itself.
const plainText = "text/plain; charset=utf-8"

// expectOwn checks an answer the gateway made itself: its status, its
// body to the byte, and that it is plain text.
func expectOwn(t *testing.T, what string, r reply, status int, body string) {
	t.Helper()
	if r.status != status || r.body != body {
		t.Errorf("%s: %d %q, want %d %q", what, r.status, r.body, status, body)
	}
	expect(t, what+": Content-Type", r.header.Get("Content-Type"), plainText)
}

// An unknown application is answered 503, in plain text, not to be
// cached (the application may register a moment later), and the reason
// names the application as the client spelled it: names match
// case-insensitively, but the client knows its own spelling.
func unknownApp(t *testing.T, start Starter) {
	base, _, _ := start(t)
	r := get(t, base+"/nosuch/x")
	expectOwn(t, "unknown app", r, 503, "no application \"nosuch\" is registered\n")
	expect(t, "unknown app: Cache-Control", r.header.Get("Cache-Control"), "no-store")
	expectOwn(t, "mixed-case unknown app", get(t, base+"/NoSuch/x"), 503, "no application \"NoSuch\" is registered\n")
}

// An application whose instances are all registered but none UP is
// answered 503 with its own reason, again in the client's spelling.
func noUPInstance(t *testing.T, start Starter) {
	base, store, _ := start(t)
	a := newBackend(t, "a", nil)
	down := instance("resting", "a", a.port)
	down.Status = eureka.StatusDown
	register(t, store, down)
	expectOwn(t, "no UP instance", get(t, base+"/Resting/x"), 503, "application \"Resting\" has no UP instance\n")
}

// An instance registered UP whose healthCheckUrl fails stops getting
// requests within a few health intervals: the gateway answers 503 with a
// reason that tells it apart from an instance that is not UP, and sends
// nothing more to the instance while the check keeps failing.
func failingHealthChecks(t *testing.T, start Starter) {
	base, store, _ := start(t)
	var checks, requests atomic.Int64
	sick := newBackend(t, "sick", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			checks.Add(1)
			http.Error(w, "unwell", 500)
			return
		}
		requests.Add(1)
		echoHandler("sick").ServeHTTP(w, r)
	}))
	i := instance("sick", "sick", sick.port)
	i.HealthCheckURL = fmt.Sprintf("http://127.0.0.1:%d/health", sick.port)
	register(t, store, i)

	const want = "application \"sick\" has no instance passing its health check\n"
	var last reply
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		last = get(t, base+"/sick/x")
		if last.status == 503 && last.body == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s of failing health checks (%d seen): %d %q, want 503 %q", checks.Load(), last.status, last.body, want)
		}
	}
	expect(t, "Content-Type", last.header.Get("Content-Type"), plainText)
	if checks.Load() == 0 {
		t.Error("the 503 came before any request to the healthCheckUrl")
	}
	reached := requests.Load()
	for range 3 {
		expectOwn(t, "while the check fails", get(t, base+"/sick/x"), 503, want)
	}
	if n := requests.Load(); n != reached {
		t.Errorf("the instance got %d requests after it failed its health check", n-reached)
	}
}

// An instance whose plain port is disabled is reached on its secure port
// over TLS, its certificate verified against TrustedCA, and the path
// forwarded as on the plain port.
func securePortOnly(t *testing.T, start Starter) {
	base, store, _ := start(t)
	v := newTLSBackend(t, "vault", nil)
	i := instance("vault", "vault", testkit.FreePort(t))
	i.Port.Enabled = false
	i.SecurePort = eureka.Port{Number: v.port, Enabled: true}
	register(t, store, i)
	s := decode(t, get(t, base+"/vault/items"))
	expect(t, "answered by", s.Name, "vault")
	expect(t, "path", s.Path, "/items")
	expect(t, "over TLS", s.TLS, true)
}

// methodHits counts the requests an instance got, by method.
type methodHits struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *methodHits) add(method string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n = map[string]int{}
	}
	h.n[method]++
}

func (h *methodHits) get(method string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[method]
}

// counting wraps handler to count requests in hits.
func counting(hits *methodHits, handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.add(r.Method)
		handler.ServeHTTP(w, r)
	})
}

// slowInstance starts an instance that answers nothing until its request
// ends or the test does, counting what it gets.
func slowInstance(t *testing.T, hits *methodHits) *backend {
	t.Helper()
	release := make(chan struct{})
	b := newBackend(t, "slow", counting(hits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})))
	// Registered after the server's Close, so run before it: Close waits
	// for the handlers.
	t.Cleanup(func() { close(release) })
	return b
}

// send makes a request with body (its Content-Length set) and reads the
// whole answer.
func send(t *testing.T, method, url, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, got := testkit.Do(t, client(), req)
	return reply{resp.StatusCode, resp.Header, got}
}

// When an instance has taken a request and sends no response header
// within ResponseHeaderTimeout, an idempotent request (PUT) is retried on
// another instance, body and all, while a POST is not, since the instance
// may have acted on it: its client is answered 504 in plain text.
//
// Each app has a "slow" and a "live" instance and gets two requests, one
// after the other, which start at different instances in turn (a retry
// does not take the turn of the next request): whichever instance the
// turn starts at, exactly one of the two goes to slow first. So slow gets
// exactly one PUT and one POST, every PUT is answered by live, and of the
// POSTs one is answered by live and one 504.
func retryAfterTimeoutByMethod(t *testing.T, start Starter) {
	base, store, _ := start(t)

	var putSlow, putLive methodHits
	register(t, store, instance("puts", "puts-slow", slowInstance(t, &putSlow).port))
	register(t, store, instance("puts", "puts-live", newBackend(t, "live", counting(&putLive, echoHandler("live"))).port))
	for n := range 2 {
		s := decode(t, send(t, "PUT", base+"/puts/p", "x"))
		expect(t, fmt.Sprintf("PUT %d answered by", n), s.Name, "live")
		expect(t, fmt.Sprintf("PUT %d body at live", n), s.Body, "x")
	}
	expect(t, "PUTs slow got", putSlow.get("PUT"), 1)
	expect(t, "PUTs live got", putLive.get("PUT"), 2)

	var postSlow, postLive methodHits
	register(t, store, instance("posts", "posts-slow", slowInstance(t, &postSlow).port))
	register(t, store, instance("posts", "posts-live", newBackend(t, "live", counting(&postLive, echoHandler("live"))).port))
	const timedOut = "application \"posts\": the instance did not answer in time\n"
	answered, timeouts := 0, 0
	for n := range 2 {
		r := send(t, "POST", base+"/posts/p", "x")
		switch {
		case r.status == 504:
			expectOwn(t, fmt.Sprintf("POST %d", n), r, 504, timedOut)
			timeouts++
		default:
			s := decode(t, r)
			expect(t, fmt.Sprintf("POST %d answered by", n), s.Name, "live")
			expect(t, fmt.Sprintf("POST %d body at live", n), s.Body, "x")
			answered++
		}
	}
	expect(t, "POSTs answered by live", answered, 1)
	expect(t, "POSTs answered 504", timeouts, 1)
	expect(t, "POSTs slow got", postSlow.get("POST"), 1)
	expect(t, "POSTs live got", postLive.get("POST"), 1)
}

// A refused connection means the instance never got the request, so even
// a POST is retried on another instance, with its body.
func retryAfterRefusedPOST(t *testing.T, start Starter) {
	base, store, _ := start(t)
	live := newBackend(t, "live", nil)
	register(t, store, instance("refuse", "dead", testkit.FreePort(t)))
	register(t, store, instance("refuse", "live", live.port))
	for n := range 4 {
		s := decode(t, send(t, "POST", base+"/refuse/p", "x"))
		expect(t, fmt.Sprintf("POST %d answered by", n), s.Name, "live")
		expect(t, fmt.Sprintf("POST %d method", n), s.Method, "POST")
		expect(t, fmt.Sprintf("POST %d body", n), s.Body, "x")
	}
}
