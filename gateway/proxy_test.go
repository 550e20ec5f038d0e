package gateway

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/routing"
)

var client = &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// serve starts an instance of app with handler and registers it as id.
func serve(t *testing.T, store *registry.Store, app, id string, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	register(t, store, app, id, srv.Listener.Addr().(*net.TCPAddr).Port)
	return srv
}

// serveHeld is serve with an instance for one request, which it holds:
// arrived closes when the request arrives, and it is answered with answer
// once release is closed.
func serveHeld(t *testing.T, store *registry.Store, app, id, answer string) (arrived, release chan struct{}) {
	t.Helper()
	arrived, release = make(chan struct{}), make(chan struct{})
	serve(t, store, app, id, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
		io.WriteString(w, answer)
	})
	return arrived, release
}

func register(t *testing.T, store *registry.Store, app, id string, port int) {
	t.Helper()
	err := store.Register(&eureka.InstanceInfo{
		InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", App: strings.ToUpper(app), IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: port, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
}

func named(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }
}

func do(t *testing.T, method, url string, body io.Reader, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	testkit.SetHeaders(req, headers...)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// Stop lets a request that is in flight finish, then refuses connections.
func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	store := registry.New(registry.Config{})
	arrived, finish := serveHeld(t, store, "slow", "a", "finished")
	g, err := New(Config{Routing: routing.Config{Instances: store}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	srv := NewServer(g, ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	base := "http://" + srv.Addr().String()

	type answer struct {
		status int
		body   string
		err    error
	}
	answers := make(chan answer, 1)
	go func() {
		resp, err := client.Get(base + "/slow/x")
		if err != nil {
			answers <- answer{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers <- answer{resp.StatusCode, string(b), err}
	}()
	<-arrived
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopped <- srv.Stop(ctx)
	}()
	// Stop waits for the request.
	testkit.Eventually(t, 5*time.Second, "the listener to close", func() bool {
		c, err := net.DialTimeout("tcp", srv.Addr().String(), time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(finish)
	if a := <-answers; a.err != nil || a.status != 200 || a.body != "finished" {
		t.Fatalf("in-flight request: %d %q %v", a.status, a.body, a.err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// X-Forwarded-Prefix is the app as the client spelled it; a trusted
// proxy's forwarded headers are kept and added to.
func TestForwardedPrefixAndTrustedProxies(t *testing.T) {
	store := registry.New(registry.Config{})
	serve(t, store, "orders", "a", func(w http.ResponseWriter, r *http.Request) {
		h := r.Header
		fmt.Fprintf(w, "%s|%s|%s|%s", h.Get("X-Forwarded-For"), h.Get("X-Forwarded-Proto"), h.Get("X-Forwarded-Host"), h.Get("X-Forwarded-Prefix"))
	})
	base, _, _ := start(t, Config{}, store)
	spoof := []string{"X-Forwarded-For", "203.0.113.9", "X-Forwarded-Proto", "https", "X-Forwarded-Host", "shop.example", "X-Forwarded-Prefix", "/api"}
	host := strings.TrimPrefix(base, "http://")
	if _, _, body := do(t, "GET", base+"/Orders/x", nil, spoof...); body != "127.0.0.1|http|"+host+"|/Orders" {
		t.Errorf("untrusted client: %q", body)
	}
	trusting, _, _ := start(t, Config{Routing: routing.Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}, store)
	if _, _, body := do(t, "GET", trusting+"/orders/x", nil, spoof...); body != "203.0.113.9, 127.0.0.1|https|shop.example|/api/orders" {
		t.Errorf("trusted proxy: %q", body)
	}
	if _, _, body := do(t, "GET", trusting+"/orders/x", nil); body != "127.0.0.1|http|"+strings.TrimPrefix(trusting, "http://")+"|/orders" {
		t.Errorf("trusted proxy without forwarded headers: %q", body)
	}
}

// RewriteHost sends the instance's address as Host.
func TestRewriteHost(t *testing.T) {
	store := registry.New(registry.Config{})
	backend := serve(t, store, "orders", "a", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Host) })
	base, _, _ := start(t, Config{RewriteHost: true}, store)
	if _, _, body := do(t, "GET", base+"/orders/x", nil); body != backend.Listener.Addr().String() {
		t.Errorf("Host = %q, want %s", body, backend.Listener.Addr())
	}
}

// An idempotent request that times out is retried on another instance; a
// POST is not, and is answered 504.
func TestTimeoutRetriesIdempotentOnly(t *testing.T) {
	store := registry.New(registry.Config{})
	release := make(chan struct{})
	var hungHits atomic.Int32
	serve(t, store, "search", "hung", func(w http.ResponseWriter, r *http.Request) {
		hungHits.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	serve(t, store, "search", "live", named("live"))
	base, g, _ := start(t, Config{Routing: routing.Config{ResponseHeaderTimeout: 300 * time.Millisecond}}, store)
	for range 4 {
		if status, _, body := do(t, "GET", base+"/search/q", nil); status != 200 || body != "live" {
			t.Fatalf("GET: %d %q", status, body)
		}
	}
	if hungHits.Load() == 0 {
		t.Fatal("no request reached the hung instance")
	}
	// The hung instance failed once: passive health skips it now.
	if _, err := g.bal.Pick("SEARCH"); err != nil {
		t.Fatal(err)
	}

	only := registry.New(registry.Config{})
	serve(t, only, "search", "hung", func(w http.ResponseWriter, r *http.Request) {
		hungHits.Add(1)
		io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	register(t, only, "search", "other-hung", testkit.FreePort(t)) // would be retried on, if POST were
	base2, _, _ := start(t, Config{Routing: routing.Config{ResponseHeaderTimeout: 300 * time.Millisecond}}, only)
	before := hungHits.Load()
	began := time.Now()
	status, _, body := do(t, "POST", base2+"/search/q", strings.NewReader("payload"))
	for status != 504 && time.Since(began) < 5*time.Second {
		// Round-robin sent it to the dead instance first: a dial
		// failure, retried on the hung one, which times out.
		status, _, body = do(t, "POST", base2+"/search/q", strings.NewReader("payload"))
	}
	if status != 504 || !strings.Contains(body, "did not answer in time") {
		t.Fatalf("POST to a hung instance: %d %q", status, body)
	}
	if hungHits.Load()-before < 1 {
		t.Fatal("the POST did not reach the hung instance")
	}
}

// A request whose dial failed is retried whatever its method, with its
// body, streamed or not.
func TestPostRetriedAfterRefusedConnection(t *testing.T) {
	store := registry.New(registry.Config{})
	register(t, store, "orders", "dead", testkit.FreePort(t))
	serve(t, store, "orders", "live", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "live %d", n)
	})
	base, _, _ := start(t, Config{}, store)
	for _, size := range []int{7, 1 << 20} {
		for range 2 {
			status, _, body := do(t, "POST", base+"/orders/new", strings.NewReader(strings.Repeat("x", size)))
			if status != 200 || body != fmt.Sprintf("live %d", size) {
				t.Fatalf("POST of %d bytes: %d %q", size, status, body)
			}
		}
	}
}

// Bodies over MaxRequestBodySize are refused with 413, by Content-Length
// or, for a chunked body, once it passes the limit.
func TestRequestBodyLimit(t *testing.T) {
	store := registry.New(registry.Config{})
	serve(t, store, "files", "a", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d", n)
	})
	base, _, _ := start(t, Config{MaxRequestBodySize: 100 << 10}, store)
	if status, _, body := do(t, "POST", base+"/files/x", strings.NewReader(strings.Repeat("x", 100<<10))); status != 200 || body != "102400" {
		t.Errorf("at the limit: %d %q", status, body)
	}
	if status, _, _ := do(t, "POST", base+"/files/x", strings.NewReader(strings.Repeat("x", 100<<10+1))); status != 413 {
		t.Errorf("over the limit: %d", status)
	}
	// io.MultiReader hides the length: the body goes chunked.
	if status, _, _ := do(t, "POST", base+"/files/x", io.MultiReader(strings.NewReader(strings.Repeat("x", 300<<10)))); status != 413 {
		t.Errorf("chunked over the limit: %d", status)
	}
	if status, _, body := do(t, "POST", base+"/files/x", io.MultiReader(strings.NewReader(strings.Repeat("x", 90<<10)))); status != 200 || body != "92160" {
		t.Errorf("chunked under the limit: %d %q", status, body)
	}

	// The body over the limit is read and dropped, not left for a close
	// to reset the connection under the client still writing it: the
	// connection carries the next request, by length and chunked.
	raw := dialRaw(t, base)
	over := strings.Repeat("x", 150<<10)
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(over), over)
	for _, req := range []string{
		fmt.Sprintf("POST /files/x HTTP/1.1\r\nHost: gw\r\nContent-Length: %d\r\n\r\n%s", len(over), over),
		"POST /files/x HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked,
	} {
		raw.send(req + "POST /files/x HTTP/1.1\r\nHost: gw\r\nContent-Length: 3\r\n\r\nabc")
		for _, want := range []int{413, 200} {
			resp, body := raw.read("POST")
			if resp.StatusCode != want || resp.Close || want == 200 && body != "3" {
				t.Fatalf("%d (close %v) %q, want %d on a kept connection", resp.StatusCode, resp.Close, body, want)
			}
		}
	}

	// A chunked body whose rest past the limit is not a body: 413, and
	// the answer says the connection closes.
	raw2 := dialRaw(t, base)
	raw2.send("POST /files/x HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n", len(over), over) + "zz\r\nnot a chunk\r\n")
	if resp, _ := raw2.read("POST"); resp.StatusCode != 413 || !resp.Close {
		t.Errorf("a broken chunked body over the limit: %d, close %v; want 413 and close", resp.StatusCode, resp.Close)
	}
}

// The pooled connections to an instance are closed when it leaves the
// registry.
// In both modes; with one loop, so that one pool serves every request.
func TestPoolClosedWhenInstanceLeaves(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { testPoolClosedWhenInstanceLeaves(t, ServerConfig{Loops: oneLoop(m.loops)}) })
	}
}

// oneLoop is loops, but 1 for the default.
func oneLoop(loops int) int {
	if loops == 0 {
		return 1
	}
	return loops
}

func testPoolClosedWhenInstanceLeaves(t *testing.T, scfg ServerConfig) {
	store := registry.New(registry.Config{})
	var open atomic.Int32
	backend := httptest.NewUnstartedServer(named("a"))
	backend.Config.ConnState = func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	backend.Start()
	defer backend.Close()
	register(t, store, "orders", "a", backend.Listener.Addr().(*net.TCPAddr).Port)
	base, g, _ := startServer(t, Config{SweepInterval: time.Hour}, scfg, store) // only the change notification (or a loop's tick) sweeps
	for range 3 {
		if status, _, body := do(t, "GET", base+"/orders/x", nil); status != 200 || body != "a" {
			t.Fatalf("%d %q", status, body)
		}
	}
	if n := open.Load(); n != 1 {
		t.Fatalf("%d connections to the instance, want 1 kept alive", n)
	}
	store.Cancel("ORDERS", "a", false)
	testkit.Eventually(t, 5*time.Second, "the pooled connection to close", func() bool { return open.Load() == 0 })
	if m := g.pools.m.Load(); m != nil && len(*m) != 0 {
		t.Errorf("pools left: %v", *m)
	}
}
