package balancer

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// versionHits counts the requests of the versioned servers, by server
// name, and keeps the RouteHeader values each request had.
type versionHits struct {
	mu     sync.Mutex
	n      map[string]int
	routes map[string]int // RouteHeader values, joined by ";" ("-": none)
}

func (h *versionHits) add(name, route string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n, h.routes = map[string]int{}, map[string]int{}
	}
	h.n[name]++
	h.routes[route]++
}

func (h *versionHits) get(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[name]
}

func (h *versionHits) routeCounts() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for k, v := range h.routes {
		out[k] = v
	}
	return out
}

// versionServer starts a server that counts its requests in hits and
// answers its name, and returns its instance of INVENTORY, of version.
func versionServer(t *testing.T, hits *versionHits, name, version string) *eureka.InstanceInfo {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := strings.Join(r.Header.Values(RouteHeader), ";")
		if route == "" {
			route = "-"
		}
		hits.add(name, route)
		io.WriteString(w, name)
	}))
	t.Cleanup(s.Close)
	return versionInstance(name, serverPort(s), version)
}

// versionInstance is an instance of INVENTORY on loopback port, of
// version.
func versionInstance(id string, port int, version string) *eureka.InstanceInfo {
	i := loopbackInstance(id, port)
	i.Metadata = map[string]string{"version": version}
	return i
}

// subsetClient is an HTTPClient over src whose connections are closed
// when the test ends.
func subsetClient(t *testing.T, src Instancer) *HTTPClient {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &HTTPClient{Balancer: New(src, Config{}), Client: &http.Client{Transport: tr}}
}

func mustSelector(t *testing.T, text string) Selector {
	t.Helper()
	s, err := ParseSelector(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// call sends a GET to http://inventory/ with ctx and headers, and returns
// the name of the server that answered.
func call(t *testing.T, c *HTTPClient, ctx context.Context, headers ...string) (string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://inventory/items", nil)
	if err != nil {
		t.Fatal(err)
	}
	testkit.SetHeaders(req, headers...)
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// A request whose context carries a selector goes to the instances of
// that subset only, spread over them, and tells them the subset; one
// without goes to any instance, and tells none.
func TestHTTPClientSubsetFromContext(t *testing.T) {
	var hits versionHits
	src := staticInstancer{"INVENTORY": {
		versionServer(t, &hits, "old", "2.0"),
		versionServer(t, &hits, "canary-1", "2.1"),
		versionServer(t, &hits, "other", "2.0"),
		versionServer(t, &hits, "canary-2", "2.1"),
	}}
	c := subsetClient(t, src)
	ctx := WithSelector(context.Background(), mustSelector(t, "version=2.1"))
	for n := range 10 {
		name, err := call(t, c, ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "canary-") {
			t.Fatalf("call %d in subset version=2.1 answered by %s", n, name)
		}
	}
	if hits.get("canary-1") != 5 || hits.get("canary-2") != 5 {
		t.Errorf("the subset's calls were not spread over its instances: %v", hits.n)
	}
	if got := hits.routeCounts(); len(got) != 1 || got["version=2.1"] != 10 {
		t.Errorf("%s values the instances got: %v, want version=2.1 on all 10", RouteHeader, got)
	}

	// Without a selector: any instance, no header.
	var plain versionHits
	c = subsetClient(t, staticInstancer{"INVENTORY": {
		versionServer(t, &plain, "old", "2.0"), versionServer(t, &plain, "canary", "2.1"),
	}})
	for range 4 {
		if _, err := call(t, c, context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if plain.get("old") != 2 || plain.get("canary") != 2 {
		t.Errorf("calls without a selector: %v, want 2 at each instance", plain.n)
	}
	if got := plain.routeCounts(); got["-"] != 4 {
		t.Errorf("%s values without a selector: %v, want none", RouteHeader, got)
	}
}

// When the app has no instance in the subset, the request goes to any
// instance, and still carries the selector on for the services after it.
func TestHTTPClientSubsetFallsBackToAnyInstance(t *testing.T) {
	var hits versionHits
	c := subsetClient(t, staticInstancer{"INVENTORY": {
		versionServer(t, &hits, "a", "2.0"), versionServer(t, &hits, "b", "2.1"),
	}})
	ctx := WithSelector(context.Background(), mustSelector(t, "version=3.0"))
	for n := range 6 {
		if _, err := call(t, c, ctx); err != nil {
			t.Fatalf("call %d to a subset without instances: %v", n, err)
		}
	}
	if hits.get("a") != 3 || hits.get("b") != 3 {
		t.Errorf("calls to an empty subset: %v, want 3 at each instance", hits.n)
	}
	if got := hits.routeCounts(); len(got) != 1 || got["version=3.0"] != 6 {
		t.Errorf("%s values: %v, want version=3.0 on all 6", RouteHeader, got)
	}
}

// The selector goes on in RouteHeader: one the request has in its header
// picks the subset too, the context's wins over the header's and replaces
// it, and a service served through Propagate passes the one it got to the
// next.
func TestHTTPClientSubsetHeaderCarriedOn(t *testing.T) {
	var hits versionHits
	c := subsetClient(t, staticInstancer{"INVENTORY": {
		versionServer(t, &hits, "old", "2.0"), versionServer(t, &hits, "canary", "2.1"),
	}})

	// The request's own header.
	for range 3 {
		if name, err := call(t, c, context.Background(), RouteHeader, "version=2.1"); err != nil || name != "canary" {
			t.Fatalf("a call with %s: version=2.1: %q %v, want canary", RouteHeader, name, err)
		}
	}
	// The context's selector over the header's.
	ctx := WithSelector(context.Background(), mustSelector(t, "version=2.0"))
	for range 3 {
		if name, err := call(t, c, ctx, RouteHeader, "version=2.1"); err != nil || name != "old" {
			t.Fatalf("a call in version=2.0 with %s: version=2.1: %q %v, want old", RouteHeader, name, err)
		}
	}
	if got := hits.routeCounts(); len(got) != 2 || got["version=2.1"] != 3 || got["version=2.0"] != 3 {
		t.Errorf("%s values: %v, want version=2.1 thrice and version=2.0 thrice, one value each", RouteHeader, got)
	}

	// Through a service: a request to it with the header, its call on
	// with the request's context.
	front := httptest.NewServer(Propagate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), "GET", "http://inventory/items", nil)
		resp, err := c.Do(req)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		io.Copy(w, resp.Body)
	})))
	t.Cleanup(front.Close)
	fc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for _, tc := range []struct{ route, want string }{{"version=2.1", "canary"}, {"version=2.0", "old"}, {"", ""}} {
		for range 2 {
			req, _ := http.NewRequest("GET", front.URL, nil)
			if tc.route != "" {
				req.Header.Set(RouteHeader, tc.route)
			}
			resp, err := fc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.want != "" && string(b) != tc.want {
				t.Errorf("through a service with %s: %q: answered by %q, want %s", RouteHeader, tc.route, b, tc.want)
			}
		}
	}
	if got := hits.routeCounts(); got["version=2.1"] != 5 || got["version=2.0"] != 5 || got["-"] != 2 {
		t.Errorf("%s values after the service's calls: %v, want version=2.1 and version=2.0 five times each, none twice", RouteHeader, got)
	}
}

// A call that fails at an instance of its subset is retried on another
// instance of the subset, never on one outside it; when every instance of
// the subset fails, the call fails rather than leave the subset.
func TestHTTPClientSubsetRetriesStayInSubset(t *testing.T) {
	var hits versionHits
	c := subsetClient(t, staticInstancer{"INVENTORY": {
		versionServer(t, &hits, "old-1", "2.0"),
		versionInstance("canary-dead", testkit.FreePort(t), "2.1"),
		versionServer(t, &hits, "old-2", "2.0"),
		versionServer(t, &hits, "canary-live", "2.1"),
	}})
	ctx := WithSelector(context.Background(), mustSelector(t, "version=2.1"))
	for n := range 6 {
		name, err := call(t, c, ctx)
		if err != nil {
			t.Fatalf("call %d: %v", n, err)
		}
		if name != "canary-live" {
			t.Fatalf("call %d in version=2.1 answered by %s", n, name)
		}
	}
	if n := hits.get("old-1") + hits.get("old-2"); n != 0 {
		t.Errorf("the instances of 2.0 got %d calls in subset version=2.1", n)
	}

	var dead versionHits
	c = subsetClient(t, staticInstancer{"INVENTORY": {
		versionInstance("canary-dead-1", testkit.FreePort(t), "2.1"),
		versionServer(t, &dead, "old", "2.0"),
		versionInstance("canary-dead-2", testkit.FreePort(t), "2.1"),
	}})
	for n := range 3 {
		if name, err := call(t, c, ctx); err == nil {
			t.Errorf("call %d to a subset whose every instance refuses answered by %s", n, name)
		}
	}
	if n := dead.get("old"); n != 0 {
		t.Errorf("the instance of 2.0 got %d calls of subset version=2.1 when its instances failed", n)
	}
}
