package discovery

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/eurekahttp"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// netflixInstance writes an instance exactly as a Netflix or Spring Eureka
// server emits it (protocol doc 3.5): legacy field order, string
// timestamps, string @enabled, the DefaultDataCenterInfo class. It is
// written by hand here, independent of our encoder.
func netflixInstance(app, host, status, action string) string {
	id := host + ":" + strings.ToLower(app) + ":8080"
	return fmt.Sprintf(`{"instanceId":%q,"hostName":%q,"app":%q,"ipAddr":"10.0.0.12","status":%q,`+
		`"overriddenStatus":"UNKNOWN","port":{"$":8080,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"},`+
		`"countryId":1,"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},`+
		`"leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":90,"registrationTimestamp":1718000000123,`+
		`"lastRenewalTimestamp":1718000120456,"evictionTimestamp":0,"serviceUpTimestamp":1718000000100},`+
		`"metadata":{"@class":"java.util.Collections$EmptyMap"},"homePageUrl":"http://%s:8080/",`+
		`"statusPageUrl":"http://%s:8080/actuator/info","healthCheckUrl":"http://%s:8080/actuator/health",`+
		`"vipAddress":%q,"secureVipAddress":%q,"isCoordinatingDiscoveryServer":"false",`+
		`"lastUpdatedTimestamp":"1718000000123","lastDirtyTimestamp":"1718000000050","actionType":%q}`,
		id, host, app, status, host, host, host, strings.ToLower(app), strings.ToLower(app), action)
}

// netflixApps wraps applications as {"applications":{...}}; apps maps an
// app name to its instances' JSON.
func netflixApps(version, hash string, apps ...[2]string) string {
	byApp := map[string][]string{}
	var order []string
	for _, a := range apps {
		if _, ok := byApp[a[0]]; !ok {
			order = append(order, a[0])
		}
		byApp[a[0]] = append(byApp[a[0]], a[1])
	}
	var parts []string
	for _, name := range order {
		parts = append(parts, fmt.Sprintf(`{"name":%q,"instance":[%s]}`, name, strings.Join(byApp[name], ",")))
	}
	return fmt.Sprintf(`{"applications":{"versions__delta":%q,"apps__hashcode":%q,"application":[%s]}}`,
		version, hash, strings.Join(parts, ","))
}

func inApp(app, host, status, action string) [2]string {
	return [2]string{app, netflixInstance(app, host, status, action)}
}

// fakeEureka serves scripted full and delta documents.
type fakeEureka struct {
	mu          sync.Mutex
	full        string
	deltas      []string
	deltaStatus int
	fullCalls   int
	deltaCalls  int
	queries     []string          // the query of every request
	uris        []string          // the path and query of every request
	headers     map[string]string // sent with every answer
	srv         *httptest.Server
}

func newFakeEureka(t *testing.T) *fakeEureka {
	f := &fakeEureka{deltaStatus: 200}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEureka) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, r.URL.RawQuery)
	f.uris = append(f.uris, r.URL.RequestURI())
	for k, v := range f.headers {
		w.Header().Set(k, v)
	}
	if r.Header.Get("Accept") != "application/json" {
		http.Error(w, "client must ask for JSON", http.StatusNotAcceptable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/eureka/apps/":
		f.fullCalls++
		fmt.Fprint(w, f.full)
	case "/eureka/apps/delta":
		f.deltaCalls++
		if f.deltaStatus != 200 {
			w.WriteHeader(f.deltaStatus)
			return
		}
		if len(f.deltas) == 0 {
			fmt.Fprint(w, netflixApps("99", "", nil...))
			return
		}
		d := f.deltas[0]
		f.deltas = f.deltas[1:]
		fmt.Fprint(w, d)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeEureka) set(edit func(f *fakeEureka)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	edit(f)
}

func (f *fakeEureka) calls() (full, delta int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fullCalls, f.deltaCalls
}

func (f *fakeEureka) url() string { return f.srv.URL + "/eureka/" }

func ids(list []*eureka.InstanceInfo) string {
	var out []string
	for _, i := range list {
		out = append(out, i.HostName+"="+i.Status.String())
	}
	return strings.Join(out, ",")
}

func newFetchOnly(t *testing.T, urls ...string) *Client {
	c, err := New(Config{ServiceURLs: urls})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustRefresh(t *testing.T, c *Client) {
	t.Helper()
	if err := c.Refresh(); err != nil {
		t.Fatal(err)
	}
}

// newFetchedOrders is a fake registry of one instance, ORDERS h1 UP at
// version 1, and a fetch-only client that has fetched it in full.
func newFetchedOrders(t *testing.T) (*fakeEureka, *Client) {
	t.Helper()
	f := newFakeEureka(t)
	f.full = netflixApps("1", "UP_1_", inApp("ORDERS", "h1", "UP", "ADDED"))
	c := newFetchOnly(t, f.url())
	mustRefresh(t, c)
	return f, c
}

func TestFullFetchThenDeltas(t *testing.T) {
	f := newFakeEureka(t)
	f.full = netflixApps("1", "UP_3_",
		inApp("ORDERS", "h1", "UP", "ADDED"), inApp("ORDERS", "h2", "UP", "ADDED"), inApp("BILLING", "b1", "UP", "ADDED"))
	c := newFetchOnly(t, f.url())
	mustRefresh(t, c)
	if got := ids(c.Instances("ORDERS")); got != "h1=UP,h2=UP" {
		t.Fatalf("after full fetch: %s", got)
	}
	if full, delta := f.calls(); full != 1 || delta != 0 {
		t.Fatalf("calls: full %d delta %d", full, delta)
	}
	changes := c.Changed()

	// ADDED, MODIFIED and DELETED in one delta; the hash is the server's
	// full registry after them.
	f.set(func(f *fakeEureka) {
		f.deltas = append(f.deltas, netflixApps("2", "OUT_OF_SERVICE_1_UP_2_",
			inApp("ORDERS", "h3", "UP", "ADDED"), inApp("ORDERS", "h2", "OUT_OF_SERVICE", "MODIFIED"),
			inApp("BILLING", "b1", "UP", "DELETED")))
	})
	mustRefresh(t, c)
	if got := ids(c.Instances("ORDERS")); got != "h1=UP,h3=UP" {
		t.Errorf("UP view after delta: %s", got)
	}
	if got := ids(c.AllInstances("ORDERS")); got != "h1=UP,h2=OUT_OF_SERVICE,h3=UP" {
		t.Errorf("all instances after delta: %s", got)
	}
	if c.Instances("BILLING") != nil {
		t.Error("deleted app still listed")
	}
	select {
	case <-changes:
	default:
		t.Error("delta not announced")
	}

	// Registered and cancelled within one delta window: the server sends
	// one DELETED record for an instance the client never saw.
	f.set(func(f *fakeEureka) {
		f.deltas = append(f.deltas, netflixApps("3", "OUT_OF_SERVICE_1_UP_2_", inApp("ORDERS", "h9", "UP", "DELETED")))
	})
	mustRefresh(t, c)
	if got := ids(c.AllInstances("ORDERS")); got != "h1=UP,h2=OUT_OF_SERVICE,h3=UP" {
		t.Errorf("after register-then-cancel: %s", got)
	}
	if full, _ := f.calls(); full != 1 {
		t.Errorf("consistent deltas caused %d full fetches", full-1)
	}
	if doc := c.Applications(); doc.VersionsDelta != 3 || doc.AppsHashcode != "OUT_OF_SERVICE_1_UP_2_" {
		t.Errorf("snapshot version %d hash %q", doc.VersionsDelta, doc.AppsHashcode)
	}
}

func TestWrongHashForcesFullFetch(t *testing.T) {
	f, c := newFetchedOrders(t)
	// The delta misses a change (h2 was added on the server): its hash,
	// the server's full registry, does not match after applying it.
	f.set(func(f *fakeEureka) {
		f.full = netflixApps("1", "UP_2_", inApp("ORDERS", "h1", "UP", "ADDED"), inApp("ORDERS", "h2", "UP", "ADDED"))
		f.deltas = []string{netflixApps("5", "UP_2_", nil...)}
	})
	mustRefresh(t, c)
	if full, _ := f.calls(); full != 2 {
		t.Fatalf("full fetches: %d, want a reconcile", full)
	}
	if got := ids(c.Instances("ORDERS")); got != "h1=UP,h2=UP" {
		t.Fatalf("after reconcile: %s", got)
	}
	if v := c.Applications().VersionsDelta; v != 5 {
		t.Errorf("version after reconcile = %d, want the delta's 5", v)
	}
	// Converged: the next (empty, matching) delta needs no full fetch.
	f.set(func(f *fakeEureka) { f.deltas = []string{netflixApps("6", "UP_2_", nil...)} })
	mustRefresh(t, c)
	if full, _ := f.calls(); full != 2 {
		t.Errorf("still reconciling after convergence: %d full fetches", full)
	}
}

func TestRefusedDeltaFallsBackToFullFetch(t *testing.T) {
	f, c := newFetchedOrders(t)
	f.set(func(f *fakeEureka) {
		f.deltaStatus = http.StatusForbidden
		f.full = netflixApps("1", "UP_1_", inApp("ORDERS", "h7", "UP", "ADDED"))
	})
	mustRefresh(t, c)
	if full, delta := f.calls(); full != 2 || delta != 1 {
		t.Fatalf("calls after 403 delta: full %d delta %d", full, delta)
	}
	if got := ids(c.Instances("ORDERS")); got != "h7=UP" {
		t.Fatalf("after 403 fallback: %s", got)
	}
}

func TestVersionMinusOneMeansFullFetches(t *testing.T) {
	f := newFakeEureka(t)
	f.full = `{"applications":{"apps__hashcode":"UP_1_","application":[{"name":"ORDERS","instance":[` + netflixInstance("ORDERS", "h1", "UP", "ADDED") + `]}]}}`
	c := newFetchOnly(t, f.url())
	mustRefresh(t, c)
	mustRefresh(t, c)
	if full, delta := f.calls(); full != 2 || delta != 0 {
		t.Fatalf("a registry without versions__delta must be fetched in full: full %d delta %d", full, delta)
	}
}

func TestServerDownKeepsCacheAndFailsOver(t *testing.T) {
	f := newFakeEureka(t)
	f.full = netflixApps("1", "UP_1_", inApp("ORDERS", "h1", "UP", "ADDED"))
	deadURL := "http://" + testkit.FreeAddr(t) + "/eureka/"

	// The dead server first: the client moves on to the live one.
	c, err := New(Config{ServiceURLs: []string{deadURL}, ZoneServiceURLs: map[string][]string{"other": {f.url()}}})
	if err != nil {
		t.Fatal(err)
	}
	mustRefresh(t, c)
	if got := ids(c.Instances("ORDERS")); got != "h1=UP" {
		t.Fatalf("after failover: %s", got)
	}

	// Every server down: the refresh fails and the cache is kept.
	f.srv.Close()
	if err := c.Refresh(); err == nil {
		t.Fatal("refresh with every server down succeeded")
	}
	if got := ids(c.Instances("ORDERS")); got != "h1=UP" {
		t.Fatalf("cache lost while the servers are down: %s", got)
	}
}

func TestFiveHundredFailsOver(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer bad.Close()
	f := newFakeEureka(t)
	f.full = netflixApps("1", "UP_1_", inApp("ORDERS", "h1", "UP", "ADDED"))
	c, err := New(Config{Zone: "a", ZoneServiceURLs: map[string][]string{"a": {bad.URL + "/eureka"}, "b": {f.url()}}})
	if err != nil {
		t.Fatal(err)
	}
	mustRefresh(t, c)
	mustRefresh(t, c)
	if got := ids(c.Instances("ORDERS")); got != "h1=UP" {
		t.Fatalf("after 503 failover: %s", got)
	}
}

func TestOversizedRegistryRefused(t *testing.T) {
	f := newFakeEureka(t)
	f.full = netflixApps("1", "UP_1_", inApp("ORDERS", "h1", "UP", "ADDED"))
	c, err := New(Config{ServiceURLs: []string{f.url()}, MaxResponseBodySize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(); !errors.Is(err, eurekahttp.ErrBodyTooLarge) {
		t.Fatalf("a full fetch over the limit: %v", err)
	}
	if c.Instances("ORDERS") != nil {
		t.Error("an oversized registry was used")
	}
}

// The config's zones reach the order: all four servers, the client's zone
// first unless DisablePreferSameZone. The order's own rules (the
// shuffles, the credentials and bases taken from the URLs) are
// eurekahttp.ZonedServers', which its TestZoneOrder holds.
func TestEndpointOrder(t *testing.T) {
	cfg := Config{Zone: "b", ServiceURLs: []string{"http://d/eureka/"},
		ZoneServiceURLs: map[string][]string{"a": {"http://a1/eureka"}, "b": {"http://b1/eureka/", "http://user:pw@b2/eureka/"}}}
	eps, err := orderEndpoints(cfg.withDefaults(), seededRand())
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 4 || !strings.HasPrefix(eps[0].Base, "http://b") || !strings.HasPrefix(eps[1].Base, "http://b") {
		t.Fatalf("same zone first: %+v", eps)
	}
	cfg.DisablePreferSameZone = true
	eps, _ = orderEndpoints(cfg.withDefaults(), seededRand())
	if strings.HasPrefix(eps[0].Base, "http://b") {
		t.Errorf("same-zone preference off, still first: %+v", eps)
	}
}
