package caddymodule

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/freeport"
	"github.com/eurekagate/eurekagate/internal/registrytest"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/replication"
)

func TestMain(m *testing.M) {
	// Caddy keeps its storage and autosaved config under the XDG
	// directories: keep them out of the home directory.
	dir, err := os.MkdirTemp("", "eurekagate-caddy-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_DATA_HOME", dir)
	os.Setenv("XDG_CONFIG_HOME", dir)
	caddy.ConfigAutosavePath = filepath.Join(dir, "autosave.json") // computed before TestMain
	ports := testPorts(5)
	adminPort, registryPort, gatewayPort, httpPort, httpsPort = ports[0], ports[1], ports[2], ports[3], ports[4]
	adminURL = "http://localhost:" + adminPort
	registryURL = "http://127.0.0.1:" + registryPort + "/eureka/"
	gatewayURL = "http://127.0.0.1:" + gatewayPort
	caddytest.Default.AdminPort, _ = strconv.Atoi(adminPort)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The ports of the Caddy that the tests share: caddytest runs one, in this
// process, and finds it by its admin port. They are this process's own,
// picked when it starts: with fixed ports, a second test process on the
// machine (another worktree's go test, say) loaded its configs into the
// first one's Caddy, each undoing the other's, and a site of its own
// would not have failed to bind either (Caddy binds with SO_REUSEPORT:
// the kernel would have split the connections between the two).
var (
	adminPort, registryPort, gatewayPort, httpPort, httpsPort string

	adminURL    string // the admin endpoint
	registryURL string // the registry's REST API, on registryPort
	gatewayURL  string // the gateway, on gatewayPort
)

// testPorts returns n loopback ports that nothing listens on, below the
// ephemeral range (freeport), so that no outgoing connection takes one
// while a config leaves it unbound.
func testPorts(n int) []string {
	ports, err := freeport.CaddyTests.Loopback(n)
	if err != nil {
		panic(err)
	}
	return ports
}

// testConfig is a test Caddyfile: the admin where caddytest expects it, the
// eureka app with the given options, and the sites. The old config's
// servers get no grace period unless globals give one.
func testConfig(globals, eureka string, sites ...string) string {
	grace := "grace_period 1ns"
	if strings.Contains(globals, "grace_period") {
		grace = ""
	}
	return fmt.Sprintf(`{
	admin localhost:%s
	http_port %s
	https_port %s
	%s
	%s
	eureka {
		%s
	}
}
%s`, adminPort, httpPort, httpsPort, grace, globals, eureka, strings.Join(sites, ""))
}

// registries counts the registries the tests have named.
var registries atomic.Int64

// newRegistry returns a registry name that no config in this process has
// used: base and a number. A config naming it starts a new, empty
// registry; one that named the registry of the config before it, in the
// Caddy all tests share, would find that config's registrations, status
// overrides, health and counters (those of another test, or of this one's
// previous run under -count), or be refused for settings of its own.
func newRegistry(base string) string { return fmt.Sprintf("%s-%d", base, registries.Add(1)) }

// loadConfig loads cfg, a test Caddyfile, into the Caddy that the tests
// share, and returns once cfg alone serves the test ports. caddytest
// returns when the new config runs, but Caddy stops the old one's servers
// in goroutines without waiting for them to close their listeners (each
// port is bound by both, with SO_REUSEPORT), so a request sent at once
// could still reach the previous config, and its registry.
func loadConfig(t *testing.T, cfg string) {
	t.Helper()
	loadConfigAs(t, cfg, "caddyfile")
}

// loadConfigAs is loadConfig for a config in another format ("json").
func loadConfigAs(t *testing.T, cfg, format string) {
	t.Helper()
	failed := t.Failed()
	caddytest.NewTester(t).InitServer(cfg, format)
	if t.Failed() && !failed {
		t.FailNow() // caddytest has said why
	}
	for _, port := range []string{registryPort, gatewayPort} {
		testkit.Eventually(t, 5*time.Second, "the previous config to close its listener on "+port, func() bool {
			return caddy.ListenerUsage("tcp", "127.0.0.1:"+port) <= 1
		})
		if caddy.ListenerUsage("tcp", "127.0.0.1:"+port) == 0 {
			continue // the config serves nothing there
		}
		// The old config's socket, bound beside the new one, may still
		// hold connections it will reset as it closes: wait until fresh
		// connections are answered several times in a row.
		ok := 0
		testkit.Eventually(t, 5*time.Second, "fresh connections answered on "+port, func() bool {
			resp, err := probe.Get("http://127.0.0.1:" + port + "/") // names no app: the gateways count nothing
			if err != nil {
				ok = 0
				return false
			}
			resp.Body.Close()
			ok++
			return ok >= 3
		})
	}
}

// probe opens a connection per request, with a short timeout.
var probe = &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// site is a loopback site on port with the given directives.
func site(port, body string) string {
	return fmt.Sprintf("http://:%s {\n\tbind 127.0.0.1\n%s\n}\n", port, body)
}

// gatewayConfig is the registry and the gateway on loopback.
func gatewayConfig(eureka, gateway string) string {
	return testConfig("", eureka, site(registryPort, "\teureka_server"),
		site(gatewayPort, "\teureka_gateway {\n\t\t"+gateway+"\n\t}"))
}

// backend is an instance of a service: it answers with its name and the
// path it received.
type backend struct {
	name string
	srv  *httptest.Server
	port int
}

func newBackend(t *testing.T, name string) *backend {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s xff=%t", name, r.URL.Path, r.Header.Get("X-Forwarded-For") != "")
	}))
	t.Cleanup(srv.Close)
	return serverBackend(name, srv)
}

func (b *backend) instance(app string) *eureka.InstanceInfo {
	return &eureka.InstanceInfo{
		InstanceID: b.name, HasInstanceID: true, HostName: "127.0.0.1", App: strings.ToUpper(app), IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: b.port, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
	}
}

// client opens a connection per request, so a config reload that closes
// the old server's connections never fails a request that Go would not
// resend (a POST).
var client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

func do(t *testing.T, method, url string, body []byte) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req, _ := http.NewRequest(method, url, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, b := testkit.Do(t, client, req)
	return resp.StatusCode, b
}

// getOK sends GET url until it is answered 200, failing the test if it is
// not within d, and returns that answer's body.
func getOK(t *testing.T, d time.Duration, what, url string) string {
	t.Helper()
	var body string
	testkit.Eventually(t, d, what, func() bool {
		var status int
		status, body = do(t, "GET", url, nil)
		return status == 200
	})
	return body
}

func registerVia(t *testing.T, base string, i *eureka.InstanceInfo) {
	t.Helper()
	if status, body := do(t, "POST", base+"apps/"+i.App, eureka.AppendInstanceJSON(nil, i)); status != 204 {
		t.Fatalf("register %s: %d %s", i.InstanceID, status, body)
	}
}

// route sends n requests through the gateway and returns which backend
// answered each.
func route(t *testing.T, path string, n int) []string {
	t.Helper()
	var got []string
	for range n {
		status, body := do(t, "GET", gatewayURL+path, nil)
		if status != 200 {
			t.Fatalf("GET %s: %d %q", path, status, body)
		}
		name, rest, _ := strings.Cut(body, " ")
		if rest != "/items/7 xff=true" {
			t.Fatalf("backend got %q, want /items/7 with X-Forwarded-For", rest)
		}
		got = append(got, name)
	}
	return got
}

func alternates(names []string, a, b string) bool {
	for n := 1; n < len(names); n++ {
		if names[n] == names[n-1] || (names[n] != a && names[n] != b) {
			return false
		}
	}
	return true
}

func all(names []string, want string) bool {
	for _, n := range names {
		if n != want {
			return false
		}
	}
	return true
}

func TestGatewayRoutesByServiceName(t *testing.T) {
	loadConfig(t, gatewayConfig("registry "+newRegistry("gateway-test"), ""))
	a, b := newBackend(t, "a"), newBackend(t, "b")
	registerVia(t, registryURL, a.instance("orders"))
	registerVia(t, registryURL, b.instance("orders"))

	// Requests alternate exactly between the two instances, and the app
	// name is matched case-insensitively.
	if got := route(t, "/orders/items/7", 6); !alternates(got, "a", "b") {
		t.Fatalf("not alternating: %v", got)
	}
	if got := route(t, "/ORDERS/items/7", 2); !alternates(got, "a", "b") {
		t.Fatalf("upper-case app name: %v", got)
	}

	// Cancel a: the very next request goes to b only.
	if status, _ := do(t, "DELETE", registryURL+"apps/ORDERS/a", nil); status != 200 {
		t.Fatalf("cancel: %d", status)
	}
	if got := route(t, "/orders/items/7", 4); !all(got, "b") {
		t.Fatalf("after cancel: %v", got)
	}

	// Out of service removes an instance from routing; deleting the
	// override brings it back.
	registerVia(t, registryURL, a.instance("orders"))
	if status, _ := do(t, "PUT", registryURL+"apps/ORDERS/a/status?value=OUT_OF_SERVICE", nil); status != 200 {
		t.Fatalf("override: %d", status)
	}
	if got := route(t, "/orders/items/7", 4); !all(got, "b") {
		t.Fatalf("with a out of service: %v", got)
	}
	if status, _ := do(t, "DELETE", registryURL+"apps/ORDERS/a/status?value=UP", nil); status != 200 {
		t.Fatalf("delete override: %d", status)
	}
	if got := route(t, "/orders/items/7", 4); !alternates(got, "a", "b") {
		t.Fatalf("after the override is deleted: %v", got)
	}

	// Unknown apps and apps without an UP instance: 503 with the reason.
	status, body := do(t, "GET", gatewayURL+"/nope/x", nil)
	if status != 503 || body != "no application \"nope\" is registered\n" {
		t.Fatalf("unknown app: %d %q", status, body)
	}
	do(t, "PUT", registryURL+"apps/ORDERS/a/status?value=DOWN", nil)
	do(t, "PUT", registryURL+"apps/ORDERS/b/status?value=DOWN", nil)
	status, body = do(t, "GET", gatewayURL+"/orders/items/7", nil)
	if status != 503 || body != "application \"orders\" has no UP instance\n" {
		t.Fatalf("no UP instance: %d %q", status, body)
	}
}

func TestReloadKeepsRegistrations(t *testing.T) {
	name := newRegistry("reload-test")
	loadConfig(t, gatewayConfig("registry "+name, ""))
	a, b := newBackend(t, "a"), newBackend(t, "b")
	registerVia(t, registryURL, a.instance("inventory"))
	registerVia(t, registryURL, b.instance("inventory"))

	// A real change (the gateway's retries) forces a reload.
	loadConfig(t, gatewayConfig("registry "+name, "lb_retries 2"))
	if _, cfg := do(t, "GET", adminURL+"/config/", nil); !strings.Contains(cfg, `"lb_retries":2`) {
		t.Fatalf("the new config is not running: %s", cfg)
	}
	status, body := do(t, "GET", registryURL+"apps/INVENTORY", nil)
	if status != 200 || !strings.Contains(body, "<instanceId>a</instanceId>") || !strings.Contains(body, "<instanceId>b</instanceId>") {
		t.Fatalf("registrations after reload: %d %s", status, body)
	}
	if got := route(t, "/inventory/items/7", 4); !alternates(got, "a", "b") {
		t.Fatalf("routing after reload: %v", got)
	}
}

// startRemoteRegistry runs a second registry, outside Caddy, for remote
// mode, and returns its service URL.
func startRemoteRegistry(t *testing.T) string {
	t.Helper()
	return registrytest.Start(t, registry.New(registry.Config{}), httpapi.ServerConfig{Addr: "127.0.0.1:0"}).URL()
}

func TestRemoteModeRoutesByAnotherRegistry(t *testing.T) {
	remote := startRemoteRegistry(t)
	c := newBackend(t, "c")
	registerVia(t, remote, c.instance("billing"))

	loadConfig(t, testConfig("", "registry "+newRegistry("remote-test")+"\n\t\tremote "+remote+"\n\t\tfetch_interval 100ms",
		site(gatewayPort, "\teureka_gateway")))

	if routed := getOK(t, 5*time.Second, "routing by the remote registry", gatewayURL+"/billing/items/7"); routed != "c /items/7 xff=true" {
		t.Fatalf("remote routing: %q", routed)
	}
	// The admin route reports the remote registry.
	status, body := do(t, "GET", adminURL+"/eureka/", nil)
	if status != 200 || !strings.Contains(body, `"mode":"remote"`) || !strings.Contains(body, `"BILLING":{"UP":1}`) {
		t.Fatalf("admin route: %d %s", status, body)
	}
}

func TestAdminRoute(t *testing.T) {
	name := newRegistry("admin-test")
	loadConfig(t, gatewayConfig("registry "+name, ""))
	registerVia(t, registryURL, newBackend(t, "a").instance("orders"))
	status, body := do(t, "GET", adminURL+"/eureka/", nil)
	if status != 200 || !strings.Contains(body, `"registry":"`+name+`"`) || !strings.Contains(body, `"ORDERS":{"UP":1}`) ||
		!strings.Contains(body, `"self_preservation"`) {
		t.Fatalf("admin route: %d %s", status, body)
	}
	// snake_case throughout, as Caddy's admin API.
	if !strings.Contains(body, `"expected_renewing_clients":`) || strings.Contains(body, `"Enabled"`) {
		t.Errorf("admin route keys are not snake_case: %s", body)
	}
	if status, _ := do(t, "POST", adminURL+"/eureka/", []byte("{}")); status != 405 {
		t.Errorf("admin POST: %d", status)
	}
}

// An instance that stops answering is skipped after its first failure,
// long before its lease would expire: the request is retried on the live
// instance and the next ones avoid the dead one.
func TestPassiveHealthSkipsDeadInstance(t *testing.T) {
	loadConfig(t, gatewayConfig("registry "+newRegistry("health-test"), ""))
	live := newBackend(t, "live")
	dead := newBackend(t, "dead")
	dead.srv.Close() // registered, but nothing listens any more
	registerVia(t, registryURL, dead.instance("payments"))
	registerVia(t, registryURL, live.instance("payments"))
	if got := route(t, "/payments/items/7", 6); !all(got, "live") {
		t.Fatalf("requests reached the dead instance or failed: %v", got)
	}
}

// A Caddy-hosted registry and a standalone node replicate to each other.
func TestPeersWithStandaloneNode(t *testing.T) {
	standaloneAddr := testkit.FreeAddr(t)
	store := registry.New(registry.Config{})
	peers, err := replication.New(store, replication.Config{Peers: []string{registryURL}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: standaloneAddr})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	peers.Start()
	defer func() { peers.Stop(); srv.Stop(context.Background()) }()

	loadConfig(t, gatewayConfig("registry "+newRegistry("peers-test")+"\n\t\tpeers http://"+standaloneAddr+"/eureka/", ""))
	registerVia(t, registryURL, newBackend(t, "via-caddy").instance("orders"))
	registerVia(t, "http://"+standaloneAddr+"/eureka/", newBackend(t, "via-node").instance("orders"))
	testkit.Eventually(t, 3*time.Second, "replication both ways between Caddy and the node", func() bool {
		_, onCaddy := do(t, "GET", registryURL+"apps/ORDERS", nil)
		_, ok := store.Get("ORDERS", "via-caddy")
		return ok && strings.Contains(onCaddy, "<instanceId>via-node</instanceId>")
	})
	if _, body := do(t, "GET", adminURL+"/eureka/", nil); !strings.Contains(body, `"peers":[{"url":"http://`+standaloneAddr) {
		t.Errorf("admin route without peer stats: %s", body)
	}
}

// The dashboard and the registry's metrics are served through Caddy.
func TestDashboardAndMetricsThroughCaddy(t *testing.T) {
	name := newRegistry("dashboard-test")
	loadConfig(t, testConfig("metrics", "registry "+name,
		site(registryPort, "\teureka_server\n\teureka_dashboard")))
	registerVia(t, registryURL, newBackend(t, "a").instance("orders"))
	status, body := do(t, "GET", "http://127.0.0.1:"+registryPort+"/", nil)
	if status != 200 || !strings.Contains(body, "Eurekagate registry") {
		t.Fatalf("dashboard: %d %.200s", status, body)
	}
	status, body = do(t, "GET", "http://127.0.0.1:"+registryPort+"/api/summary", nil)
	if status != 200 || !strings.Contains(body, `"id":"a"`) {
		t.Fatalf("dashboard data: %d %s", status, body)
	}
	// The health endpoint on the registry's listener, before the dashboard.
	if status, body := do(t, "GET", "http://127.0.0.1:"+registryPort+"/health", nil); status != 200 || body != `{"status":"UP"}` {
		t.Fatalf("health: %d %s", status, body)
	}
	checkMetrics := func() {
		t.Helper()
		status, body := do(t, "GET", adminURL+"/metrics", nil)
		if status != 200 || !strings.Contains(body, `caddy_eureka_instances{app="ORDERS",status="UP"} 1`) ||
			!strings.Contains(body, "caddy_eureka_registrations_total 1") {
			t.Fatalf("metrics: %d %.300s", status, body)
		}
	}
	checkMetrics()
	// A reload gives Caddy a new metrics registry; ours joins it again.
	loadConfig(t, testConfig("metrics", "registry "+name,
		site(registryPort, "\teureka_server\n\teureka_dashboard {\n\t\tpath /ui\n\t}")))
	if status, _ := do(t, "GET", "http://127.0.0.1:"+registryPort+"/ui/", nil); status != 200 {
		t.Fatalf("dashboard at its new path: %d", status)
	}
	checkMetrics()
}

// With the middle of three instances dead, the other two share the
// requests evenly: eureka_round_robin spends a turn on the upstream it
// skips, as Caddy's round_robin does.
func TestRoundRobinFairAroundDeadInstance(t *testing.T) {
	loadConfig(t, gatewayConfig("registry "+newRegistry("fair-test"), ""))
	a, dead, c := newBackend(t, "a"), newBackend(t, "b"), newBackend(t, "c")
	dead.srv.Close()
	for _, b := range []*backend{a, dead, c} {
		registerVia(t, registryURL, b.instance("stock"))
	}
	got := route(t, "/stock/items/7", 30)
	counts := map[string]int{}
	for _, name := range got {
		counts[name]++
	}
	if counts["a"] != 15 || counts["c"] != 15 || !alternates(got, "a", "c") {
		t.Fatalf("not shared evenly around the dead instance: %v", got)
	}
}

// eureka_least_requests sends no request to an instance busy with one
// while another is idle, and takes idle instances in turn.
func TestLeastRequestsAvoidsBusyInstance(t *testing.T) {
	loadConfig(t, testConfig("", "registry "+newRegistry("least-test"),
		site(registryPort, "\teureka_server"),
		site(gatewayPort, "\treverse_proxy {\n\t\tdynamic eureka inventory\n\t\tlb_policy eureka_least_requests\n\t}")))
	release, arrived := make(chan struct{}), make(chan struct{}, 1)
	var releaseOnce sync.Once
	slow := newBackend(t, "a-slow")
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before the backend closes
	slow.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		fmt.Fprint(w, "a-slow")
	})
	fast, other := newBackend(t, "b-fast"), newBackend(t, "c-fast")
	for _, b := range []*backend{slow, fast, other} {
		registerVia(t, registryURL, b.instance("inventory"))
	}
	get := func() string {
		_, body := do(t, "GET", gatewayURL+"/items/7", nil)
		name, _, _ := strings.Cut(body, " ")
		return name
	}
	// Nothing in flight: in turn, starting with the first instance, which
	// then holds its request.
	done := make(chan string, 1)
	go func() {
		resp, err := client.Get(gatewayURL + "/items/7")
		if err != nil {
			done <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(body)
	}()
	select {
	case <-arrived:
	case name := <-done:
		t.Fatalf("the first request went to %q", name)
	}
	var got []string
	for range 6 {
		got = append(got, get())
	}
	if !alternates(got, "b-fast", "c-fast") {
		t.Fatalf("with a-slow busy: %v", got)
	}
	releaseOnce.Do(func() { close(release) })
	if name := <-done; name != "a-slow" {
		t.Fatalf("the first request went to %q", name)
	}
}

// With the default fetch interval (30 s), a remote-mode gateway follows the
// remote registry by the watch: a registration is routed to, and a cancel
// stops the traffic, within seconds.
func TestRemoteModeFollowsChangesByWatch(t *testing.T) {
	remote := startRemoteRegistry(t)
	c, d := newBackend(t, "c"), newBackend(t, "d")
	registerVia(t, remote, c.instance("billing"))

	loadConfig(t, testConfig("", "registry "+newRegistry("remote-watch")+"\n\t\tremote "+remote, site(gatewayPort, "\teureka_gateway")))
	getOK(t, 10*time.Second, "routing to the first instance", gatewayURL+"/billing/x")
	registerVia(t, remote, d.instance("billing"))
	testkit.Eventually(t, 5*time.Second, "routing to a new registration", func() bool {
		_, body := do(t, "GET", gatewayURL+"/billing/x", nil)
		return strings.HasPrefix(body, "d ")
	})
	if status, _ := do(t, "DELETE", remote+"apps/BILLING/"+c.instance("billing").InstanceID, nil); status != 200 {
		t.Fatalf("cancel: %d", status)
	}
	testkit.Eventually(t, 5*time.Second, "no more traffic to a cancelled instance", func() bool {
		for range 4 {
			if _, body := do(t, "GET", gatewayURL+"/billing/x", nil); !strings.HasPrefix(body, "d ") {
				return false
			}
		}
		return true
	})
}

// A node that starts in a cluster never answers a read with an empty or a
// partial registry: until its start-up sync from a peer is done, reads get
// 503 (if Caddy serves them at all yet: it may start the http app before
// or after the eureka app), then the whole registry. The 503 itself is
// tested on the API (httpapi TestReadsWaitForReady).
func TestStartingNodeAnswers503UntilSynced(t *testing.T) {
	peer := registry.New(registry.Config{})
	for k := range 20 {
		testkit.MustRegister(t, peer, testkit.Inst("ORDERS", "o"+strconv.Itoa(k)), false)
	}
	release, fetched := make(chan struct{}), make(chan struct{})
	var fetchedOnce sync.Once
	api := httpapi.NewHTTPHandler(httpapi.NewAPI(peer, httpapi.APIConfig{}))
	peerSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/apps/") {
			fetchedOnce.Do(func() { close(fetched) })
			<-release // the sync's full fetch waits until the test lets it go
		}
		api.ServeHTTP(w, r)
	}))
	defer peerSrv.Close()

	// The reads start before the config loads, so as to see it start. Until
	// it serves, the registry port is the previous config's, if any: its
	// answers say nothing of this node, and no header names this node's
	// registry, as every answer of this config's site does.
	name := newRegistry("syncing")
	type read struct {
		status, instances int
		beforeRelease     bool
	}
	var mu sync.Mutex
	var reads []read
	others := 0 // answers of an earlier config, left out
	released := atomic.Bool{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A connection per read: a kept one would stay with the server
		// that accepted it.
		poll := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		for {
			select {
			case <-stop:
				return
			default:
			}
			before := !released.Load()
			req, _ := http.NewRequest("GET", "http://127.0.0.1:"+registryPort+"/eureka/apps/", nil)
			req.Header.Set("Accept", "application/json")
			resp, err := poll.Do(req)
			if err != nil {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			mu.Lock()
			if resp.Header.Get("X-Test-Registry") != name {
				others++
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				continue
			}
			r := read{status: resp.StatusCode, beforeRelease: before}
			if doc, err := eureka.DecodeApplicationsJSON(body); err == nil && resp.StatusCode == 200 {
				for _, a := range doc.Applications {
					r.instances += len(a.Instances)
				}
			}
			reads = append(reads, r)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	go func() {
		select { // the sync has begun, or something else has gone wrong
		case <-fetched:
		case <-time.After(10 * time.Second):
		}
		time.Sleep(500 * time.Millisecond) // a window in which the node is syncing
		released.Store(true)
		close(release)
	}()
	loadConfig(t, testConfig("", "registry "+name+"\n\t\tpeers "+peerSrv.URL+"/eureka/",
		site(registryPort, "\theader X-Test-Registry "+name+"\n\teureka_server")))
	testkit.Eventually(t, 10*time.Second, "the synced registry", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reads) > 0 && reads[len(reads)-1].status == 200
	})
	close(stop)
	<-done
	unavailable := 0
	for _, r := range reads {
		if r.status == 503 {
			unavailable++
		}
	}
	t.Logf("%d reads of this node, %d answered 503 while syncing; %d of the config before, left out", len(reads), unavailable, others)
	for _, r := range reads {
		switch {
		case r.status == 503 && !r.beforeRelease:
			// The sync may still be finishing just after the release.
		case r.status == 503:
		case r.status == 200 && r.instances == 20:
		default:
			t.Fatalf("a read answered %d with %d instances (before the sync was released: %v)", r.status, r.instances, r.beforeRelease)
		}
	}
}
