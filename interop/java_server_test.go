package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/hudl/fargo"
	logging "github.com/op/go-logging"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	_ "github.com/eurekagate/eurekagate/caddymodule"
	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/internal/apisuite"
	"github.com/eurekagate/eurekagate/internal/registrytest"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/routing"
)

// This file runs our clients against Spring Cloud Netflix's Eureka Server
// (java/server): our discovery client, hudl/fargo, eureka-js-client, and
// both our gateways (the fasthttp one and Caddy's eureka_gateway in remote
// mode) routing to a Spring client registered there. The helpers are
// prefixed jsrv.

func init() {
	// fargo logs every request at NOTICE and DEBUG.
	logging.SetLevel(logging.WARNING, "fargo")
}

// jsrvServer is the Java Eureka server on 127.0.0.2.
type jsrvServer struct {
	*proc
	base string // its service URL, http://127.0.0.2:port/eureka/
}

// jsrvStartServer runs the Spring Cloud Netflix Eureka Server on
// 127.0.0.2 (an address of its own: it recognises itself among its peers
// by host name, so nothing of ours on 127.0.0.1 can be taken for it) and
// waits until it serves. The properties, and why:
//
//   - server.address and eureka.instance.hostname 127.0.0.2: loopback
//     only, and the host name it compares service URLs with;
//   - eureka.client.service-url.defaultZone its own URL: its peer list is
//     the service URLs less its own, so it has no peers (the default,
//     http://localhost:8761/eureka/, would make whatever listens there a
//     peer it replicates to);
//   - eureka.client.register-with-eureka=false and fetch-registry=false:
//     its embedded client neither registers nor fetches, which also keeps
//     registry-sync-retries at 0, so that it does not spend minutes
//     syncing from peers that have nothing before it starts;
//   - eureka.server.use-read-only-response-cache=false: reads see each
//     write at once instead of after up to 30 s;
//   - eureka.server.enable-self-preservation=false and
//     eviction-interval-timer-in-ms=1000: an expired lease is evicted
//     within a second, whatever the renewal count;
//   - INFO for AbstractInstanceRegistry ("Registered instance ...",
//     "Cancelled instance ...") and for the initializer ("Started Eureka
//     Server"), the lines the tests read or show on failure.
func jsrvStartServer(t *testing.T) *jsrvServer {
	t.Helper()
	p, port := startJavaOnFreePort(t, "java eureka server", "server", "127.0.0.2", func(port int) []string {
		return []string{
			fmt.Sprintf("--server.port=%d", port),
			"--server.address=127.0.0.2",
			"--eureka.instance.hostname=127.0.0.2",
			fmt.Sprintf("--eureka.client.service-url.defaultZone=http://127.0.0.2:%d/eureka/", port),
			"--eureka.client.register-with-eureka=false",
			"--eureka.client.fetch-registry=false",
			"--eureka.server.use-read-only-response-cache=false",
			"--eureka.server.enable-self-preservation=false",
			"--eureka.server.eviction-interval-timer-in-ms=1000",
			"--logging.level.com.netflix.eureka.registry.AbstractInstanceRegistry=INFO",
			"--logging.level.org.springframework.cloud.netflix.eureka.server.EurekaServerInitializerConfiguration=INFO",
		}
	})
	base := fmt.Sprintf("http://127.0.0.2:%d/eureka/", port)
	p.await(`Started Eureka Server`, 30*time.Second)
	return &jsrvServer{proc: p, base: base}
}

// Our clients and gateways against Spring Cloud Netflix's Eureka Server.
// One server serves them all; each subtest uses its own applications, so
// they run in parallel against it. DiscoveryClientWithApps fails: with an
// interest (Apps or LearnApps) our client makes a full fetch every
// interval against a server without the watch, where Java's client would
// take deltas (see its comment).
func TestJavaServer(t *testing.T) {
	requireJava(t)
	t.Parallel()
	java := jsrvStartServer(t)
	t.Run("DiscoveryClient", func(t *testing.T) { t.Parallel(); jsrvDiscoveryClient(t, java) })
	t.Run("DiscoveryClientWithApps", func(t *testing.T) { t.Parallel(); jsrvDiscoveryClientWithApps(t, java) })
	t.Run("Fargo", func(t *testing.T) { t.Parallel(); jsrvFargo(t, java) })
	t.Run("EurekaJSClient", func(t *testing.T) { t.Parallel(); jsrvJSClient(t, java) })
	t.Run("Gateways", func(t *testing.T) { t.Parallel(); jsrvGateways(t, java) })
}

// jsrvTap is the recording proxy (recorder) in front of the Java server:
// what a client asked (full fetch, delta, watch) and what the server
// answered, the watch header included.
type jsrvTap = recorder

type jsrvExchange = recorded

func jsrvNewTap(t *testing.T, target string) *jsrvTap { return newRecorder(t, target) }

// exchanges returns those with method and path (any method if ""), in
// the order the requests arrived.
func (tap *recorder) exchanges(method, path string) []jsrvExchange {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	var out []jsrvExchange
	for _, x := range tap.log {
		if (method == "" || x.method == method) && x.path == path {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b jsrvExchange) int { return a.at.Compare(b.at) })
	return out
}

func jsrvSince(xs []jsrvExchange, since time.Time) []jsrvExchange {
	var out []jsrvExchange
	for _, x := range xs {
		if x.at.After(since) {
			out = append(out, x)
		}
	}
	return out
}

// jsrvClient starts a discovery client with cfg, logging to an observer,
// and stops it at cleanup.
func jsrvClient(t *testing.T, cfg discovery.Config) (*discovery.Client, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.Logger = zap.New(core)
	c, err := discovery.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	testkit.StopOnCleanup(t, 15*time.Second, func(ctx context.Context) {
		c.Stop(ctx)
	})
	return c, logs
}

// jsrvWarnings are the entries at warn level or above.
func jsrvWarnings(logs *observer.ObservedLogs) []string {
	var out []string
	for _, e := range logs.FilterLevelExact(zapcore.WarnLevel).All() {
		out = append(out, fmt.Sprint(e.Message, " ", e.ContextMap()))
	}
	for _, e := range logs.FilterLevelExact(zapcore.ErrorLevel).All() {
		out = append(out, fmt.Sprint(e.Message, " ", e.ContextMap()))
	}
	return out
}

// jsrvStatus is app/id's status in c's local registry, "" if absent.
func jsrvStatus(c *discovery.Client, app, id string) string {
	for _, i := range c.AllInstances(app) {
		if i.ID() == id {
			return i.Status.String()
		}
	}
	return ""
}

// jsrvRoutable reports whether app/id is among c's UP instances.
func jsrvRoutable(c *discovery.Client, app, id string) bool {
	return slices.ContainsFunc(c.Instances(app), func(i *eureka.InstanceInfo) bool { return i.ID() == id })
}

// jsrvHashHolds checks that c's local registry counts to the reconcile
// hash it last accepted from the server: the client keeps a delta only if
// the two match, and reconciles with a full fetch otherwise.
func jsrvHashHolds(t *testing.T, c *discovery.Client, when string) {
	t.Helper()
	doc := c.Applications()
	if got := eureka.ReconcileHash(doc.Applications); got != doc.AppsHashcode {
		t.Errorf("%s: the local registry counts to %q, the server's hash it holds is %q", when, got, doc.AppsHashcode)
	}
}

// jsrvFullHash is the Java server's full registry and its hash.
func jsrvFullHash(t *testing.T, base string) (string, string) {
	t.Helper()
	status, body := call(t, "GET", base+"apps/", nil, "Accept", "application/json")
	if status != 200 {
		t.Fatalf("GET apps/ from the Java server: %d %s", status, body)
	}
	doc, err := eureka.DecodeApplicationsJSON([]byte(body))
	if err != nil {
		t.Fatalf("decoding the Java server's apps/: %v: %s", err, body)
	}
	return doc.AppsHashcode, eureka.ReconcileHash(doc.Applications)
}

// jsrvHeld waits for app/id as the Java server holds it to have status
// (and overriddenStatus, unless override is "").
func jsrvHeld(t *testing.T, base, app, id, status, override string) {
	t.Helper()
	eventually(t, 10*time.Second, fmt.Sprintf("the Java server holds %s/%s as %s", app, id, status), func() (bool, string) {
		got, code := instanceJSON(t, base, app, id)
		return code == 200 && got["status"] == status && (override == "" || got["overriddenStatus"] == override),
			fmt.Sprint(code, " ", got["status"], " ", got["overriddenStatus"])
	})
}

// jsrvGone waits until the Java server answers 404 for app/id.
func jsrvGone(t *testing.T, base, app, id string) {
	t.Helper()
	eventually(t, 10*time.Second, fmt.Sprintf("the Java server no longer has %s/%s", app, id), func() (bool, string) {
		_, code := instanceJSON(t, base, app, id)
		return code == 404, fmt.Sprint(code)
	})
}

// Our discovery client against the Java server: it registers with every
// field kept, renews, fetches the whole registry once and then only
// deltas, each of which matches the server's reconcile hash (a mismatch
// would make a full fetch, which the tap would show), follows another
// client's status changes (its own SetStatus and a server-side override)
// and its cancel on Stop, and polls every RegistryFetchInterval: the Java
// server does not advertise the watch.
func jsrvDiscoveryClient(t *testing.T, java *jsrvServer) {
	tap := jsrvNewTap(t, java.base)
	a, logsA := jsrvClient(t, discovery.Config{
		ServiceURLs:           []string{tap.serviceURL()},
		RegistryFetchInterval: time.Second,
		Instance: &discovery.InstanceConfig{
			AppName: "goapp", InstanceID: "go-1", HostName: "127.0.0.1", IPAddr: "127.0.0.1", Port: 9001,
			HomePageURL: "http://127.0.0.1:9001/", StatusPageURL: "http://127.0.0.1:9001/info", HealthCheckURL: "http://127.0.0.1:9001/health",
			Metadata:             map[string]string{"team": "payments"},
			LeaseRenewalInterval: time.Second, LeaseDuration: 10 * time.Second,
		},
	})

	// Register: the Java server keeps every field we sent.
	eventually(t, 15*time.Second, "go-1 registered (204)", func() (bool, string) {
		regs := tap.exchanges("POST", "/eureka/apps/GOAPP")
		return len(regs) > 0 && regs[0].status == 204, fmt.Sprint(len(regs))
	})
	reg := tap.exchanges("POST", "/eureka/apps/GOAPP")[0]
	var sent struct {
		Instance map[string]any `json:"instance"`
	}
	if err := decodeNumbers(reg.body, &sent); err != nil {
		t.Fatalf("our registration body: %v: %s", err, reg.body)
	}
	held, code := instanceJSON(t, java.base, "GOAPP", "go-1")
	if code != 200 {
		t.Fatalf("GET apps/GOAPP/go-1 from the Java server: %d", code)
	}
	if diffs := sameFields("", sent.Instance, held); len(diffs) > 0 {
		t.Errorf("the Java server holds our registration otherwise than we sent it:\n%s\nsent: %s", strings.Join(diffs, "\n"), reg.body)
	}

	// Renew: heartbeats every second, with status and lastDirtyTimestamp,
	// each answered 200, move the lease on.
	first := held["leaseInfo"].(map[string]any)["lastRenewalTimestamp"]
	eventually(t, 15*time.Second, "three heartbeats answered 200", func() (bool, string) {
		ok := 0
		for _, h := range tap.exchanges("PUT", "/eureka/apps/GOAPP/go-1") {
			q, _ := url.ParseQuery(h.query)
			if h.status == 200 && q.Get("status") == "UP" && q.Get("lastDirtyTimestamp") != "" {
				ok++
			}
		}
		return ok >= 3, fmt.Sprint(ok)
	})
	eventually(t, 5*time.Second, "the lease renewed", func() (bool, string) {
		got, _ := instanceJSON(t, java.base, "GOAPP", "go-1")
		last := got["leaseInfo"].(map[string]any)["lastRenewalTimestamp"]
		return fmt.Sprint(last) != fmt.Sprint(first), fmt.Sprint(last)
	})

	// Fetch: the local registry holds go-1. From then on every fetch is
	// a delta; the full fetches before it are the client's first, and
	// those that found the registry empty (Java's client does the same).
	select {
	case <-a.Ready():
	case <-time.After(15 * time.Second):
		t.Fatal("the client's first fetch did not succeed within 15s")
	}
	eventually(t, 10*time.Second, "go-1 in the local registry", func() (bool, string) {
		return jsrvRoutable(a, "GOAPP", "go-1"), jsrvStatus(a, "GOAPP", "go-1")
	})
	mark := time.Now()
	jsrvHashHolds(t, a, "after the first fetch")

	// A second client registers go-2 (it fetches nothing), changes its
	// status, is overridden by the server and stops.
	b, logsB := jsrvClient(t, discovery.Config{
		ServiceURLs:  []string{tap.serviceURL()},
		DisableFetch: true,
		Instance: &discovery.InstanceConfig{
			AppName: "goapp", InstanceID: "go-2", HostName: "127.0.0.1", IPAddr: "127.0.0.1", Port: 9002,
			LeaseRenewalInterval: time.Second, LeaseDuration: 10 * time.Second,
		},
	})
	seen := func(id, status string, routable bool) {
		t.Helper()
		eventually(t, 10*time.Second, fmt.Sprintf("%s %s in the local registry (routable %v)", id, status, routable), func() (bool, string) {
			got := jsrvStatus(a, "GOAPP", id)
			return got == status && jsrvRoutable(a, "GOAPP", id) == routable, got
		})
		jsrvHashHolds(t, a, id+" "+status)
	}
	seen("go-2", "UP", true)

	// SetStatus re-registers: DOWN takes it out of rotation, UP brings
	// it back.
	if err := b.SetStatus(eureka.StatusDown); err != nil {
		t.Fatal(err)
	}
	jsrvHeld(t, java.base, "GOAPP", "go-2", "DOWN", "")
	seen("go-2", "DOWN", false)
	if err := b.SetStatus(eureka.StatusUp); err != nil {
		t.Fatal(err)
	}
	jsrvHeld(t, java.base, "GOAPP", "go-2", "UP", "")
	seen("go-2", "UP", true)

	// A re-registration as OUT_OF_SERVICE leaves a registered UP
	// instance UP (Java's LeaseExistsRule), as SetStatus documents.
	posts := len(tap.exchanges("POST", "/eureka/apps/GOAPP"))
	if err := b.SetStatus(eureka.StatusOutOfService); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the OUT_OF_SERVICE re-registration answered 204", func() (bool, string) {
		for _, x := range tap.exchanges("POST", "/eureka/apps/GOAPP")[posts:] {
			if x.status == 204 && strings.Contains(string(x.body), `"OUT_OF_SERVICE"`) {
				return true, ""
			}
		}
		return false, "not yet"
	})
	if got, _ := instanceJSON(t, java.base, "GOAPP", "go-2"); got["status"] != "UP" {
		t.Errorf("after a re-registration as OUT_OF_SERVICE the Java server holds go-2 as %v, want UP (LeaseExistsRule)", got["status"])
	}
	if err := b.SetStatus(eureka.StatusUp); err != nil {
		t.Fatal(err)
	}

	// A server-side override: OUT_OF_SERVICE, then removed.
	if code, body := call(t, "PUT", java.base+"apps/GOAPP/go-2/status?value=OUT_OF_SERVICE", nil); code != 200 {
		t.Fatalf("PUT status OUT_OF_SERVICE on the Java server: %d %s", code, body)
	}
	seen("go-2", "OUT_OF_SERVICE", false)
	if code, body := call(t, "DELETE", java.base+"apps/GOAPP/go-2/status?value=UP", nil); code != 200 {
		t.Fatalf("DELETE the status override on the Java server: %d %s", code, body)
	}
	jsrvHeld(t, java.base, "GOAPP", "go-2", "UP", "UNKNOWN")
	seen("go-2", "UP", true)

	// The override removed without a value (what Spring's
	// CANCEL_OVERRIDE sends): the Java server makes the status UNKNOWN
	// and answers the next heartbeat 404, "re-register required"; the
	// client registers again, UP.
	if code, body := call(t, "PUT", java.base+"apps/GOAPP/go-2/status?value=OUT_OF_SERVICE", nil); code != 200 {
		t.Fatalf("PUT status OUT_OF_SERVICE on the Java server: %d %s", code, body)
	}
	seen("go-2", "OUT_OF_SERVICE", false)
	if code, body := call(t, "DELETE", java.base+"apps/GOAPP/go-2/status", nil); code != 200 {
		t.Fatalf("DELETE the status override without a value on the Java server: %d %s", code, body)
	}
	eventually(t, 10*time.Second, "go-2's client registered again after a heartbeat answered 404", func() (bool, string) {
		n := logsB.FilterMessage("heartbeat answered 404; registering again").Len()
		return n == 1, fmt.Sprint(n)
	})
	jsrvHeld(t, java.base, "GOAPP", "go-2", "UP", "UNKNOWN")
	seen("go-2", "UP", true)

	// Stop cancels: DELETE answered 200, gone from the server and, by
	// the next delta, from the other client.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := b.Stop(ctx); err != nil {
		t.Errorf("stopping go-2's client: %v", err)
	}
	// (The tap notes an exchange once it has answered it: the client may
	// be done with it first.)
	eventually(t, 5*time.Second, "go-2's cancel answered 200", func() (bool, string) {
		dels := tap.exchanges("DELETE", "/eureka/apps/GOAPP/go-2")
		return len(dels) == 1 && dels[0].status == 200, fmt.Sprintf("%+v", dels)
	})
	jsrvGone(t, java.base, "GOAPP", "go-2")
	seen("go-2", "", false)

	// The local registry and the server's agree (other subtests
	// register meanwhile: retry until a quiet moment).
	eventually(t, 10*time.Second, "the local registry counts to the Java server's full hash", func() (bool, string) {
		server, counted := jsrvFullHash(t, java.base)
		doc := a.Applications()
		local := eureka.ReconcileHash(doc.Applications)
		return server == counted && local == server, fmt.Sprintf("local %q, server %q (counted %q)", local, server, counted)
	})

	// Polling, not watching: no answer advertised the watch, no request
	// asked for one, and the deltas came a RegistryFetchInterval apart.
	// After the mark, no full fetch: no delta was refused and none failed
	// the hash check.
	fulls := jsrvSince(tap.exchanges("GET", "/eureka/apps/"), mark)
	if len(fulls) != 0 {
		t.Errorf("%d full fetches after the local registry held go-1 (a refused delta or a reconcile hash mismatch)", len(fulls))
	}
	deltas := jsrvSince(tap.exchanges("GET", "/eureka/apps/delta"), mark)
	elapsed := time.Since(mark)
	if len(deltas) < 3 {
		t.Errorf("%d deltas in %v", len(deltas), elapsed)
	}
	for i, d := range deltas {
		if d.status != 200 {
			t.Errorf("delta %d answered %d", i, d.status)
		}
		if i > 0 {
			if gap := d.at.Sub(deltas[i-1].at); gap < 900*time.Millisecond {
				t.Errorf("deltas %d and %d only %v apart: not polling every second", i-1, i, gap)
			}
		}
	}
	for _, x := range append(tap.exchanges("GET", "/eureka/apps/"), tap.exchanges("GET", "/eureka/apps/delta")...) {
		if strings.Contains(x.query, "watch=") || x.watch != "" {
			t.Errorf("a watch against the Java server: %s %s?%s answered %d, Eurekagate-Watch %q", x.method, x.path, x.query, x.status, x.watch)
		}
	}
	t.Logf("%d deltas in %v after the first fetch, none refused, no hash mismatch; %d full fetches in all",
		len(deltas), elapsed.Round(time.Millisecond), len(tap.exchanges("GET", "/eureka/apps/")))
	jsrvWatchControl(t)

	// A cancel behind the client's back (an operator's DELETE, as an
	// eviction would): its next heartbeat is answered 404, and it
	// registers again at once.
	puts := len(tap.exchanges("PUT", "/eureka/apps/GOAPP/go-1"))
	if code, body := call(t, "DELETE", java.base+"apps/GOAPP/go-1", nil); code != 200 {
		t.Fatalf("cancelling go-1 on the Java server: %d %s", code, body)
	}
	jsrvHeld(t, java.base, "GOAPP", "go-1", "UP", "")
	if n := logsA.FilterMessage("heartbeat answered 404; registering again").Len(); n != 1 {
		t.Errorf("go-1's client logged %d heartbeats answered 404, want 1", n)
	}
	eventually(t, 5*time.Second, "a heartbeat answered 404 after the cancel", func() (bool, string) {
		var after []int
		for _, x := range tap.exchanges("PUT", "/eureka/apps/GOAPP/go-1")[puts:] {
			after = append(after, x.status)
		}
		return slices.Contains(after, 404), fmt.Sprint(after)
	})

	// Stop cancels go-1 too.
	ctx, cancel = context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Errorf("stopping go-1's client: %v", err)
	}
	jsrvGone(t, java.base, "GOAPP", "go-1")
	for name, logs := range map[string]*observer.ObservedLogs{"go-1": logsA, "go-2": logsB} {
		if w := jsrvWarnings(logs); len(w) > 0 {
			t.Errorf("%s's client warned:\n%s", name, strings.Join(w, "\n"))
		}
		if n := logs.FilterMessage("instance cancelled").FilterField(zap.Int("status", 200)).Len(); n != 1 {
			t.Errorf("%s's client logged %d cancels answered 200, want 1", name, n)
		}
	}
}

// jsrvWatchControl shows that the checks for a watch above can see one:
// the same client, through the same kind of tap, against our server (in
// this process) is told of the watch and holds one.
func jsrvWatchControl(t *testing.T) {
	t.Helper()
	store := registry.New(registry.Config{})
	store.Start()
	t.Cleanup(store.Stop)
	base := registrytest.Start(t, store, httpapi.ServerConfig{Addr: "127.0.0.1:0"}).URL()
	tap := jsrvNewTap(t, base)
	c, _ := jsrvClient(t, discovery.Config{ServiceURLs: []string{tap.serviceURL()}, RegistryFetchInterval: time.Second, WatchWait: 2 * time.Second})
	select {
	case <-c.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("the control client's first fetch did not succeed within 10s")
	}
	jsrvRegisterRaw(t, base, &eureka.InstanceInfo{
		InstanceID: "w-1", HasInstanceID: true, HostName: "127.0.0.1", App: "WATCHED", IPAddr: "127.0.0.1",
		VIPAddress: "watched", Status: eureka.StatusUp, Port: eureka.Port{Number: 9040, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
	})
	eventually(t, 10*time.Second, "the control client watches our server", func() (bool, string) {
		for _, x := range tap.exchanges("GET", "/eureka/apps/delta") {
			if strings.Contains(x.query, "watch=") && x.status == 200 && x.watch != "" {
				return jsrvRoutable(c, "WATCHED", "w-1"), "watched, not yet applied"
			}
		}
		return false, fmt.Sprintf("%+v", tap.exchanges("GET", "/eureka/apps/delta"))
	})
	if full := tap.exchanges("GET", "/eureka/apps/"); len(full) == 0 || full[0].watch == "" {
		t.Errorf("our server's full fetch did not advertise the watch: %+v", full)
	}
}

// A discovery client limited to some applications (Config.Apps, or
// LearnApps: an interest only our servers' watch honours) against the
// Java server, which offers no watch and so sends the whole registry
// anyway: it should poll by deltas, as without an interest and as Java's
// client does, since its local registry is the whole registry. It makes a
// full fetch every RegistryFetchInterval instead (discovery's refresh:
// "only our servers take an interest, and they watch").
func jsrvDiscoveryClientWithApps(t *testing.T, java *jsrvServer) {
	jsrvRegisterRaw(t, java.base, &eureka.InstanceInfo{
		InstanceID: "apps-1", HasInstanceID: true, HostName: "127.0.0.1", App: "APPSONLY", IPAddr: "127.0.0.1",
		VIPAddress: "appsonly", Status: eureka.StatusUp, Port: eureka.Port{Number: 9030, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
		LeaseInfo:      eureka.LeaseInfo{RenewalIntervalInSecs: 30, DurationInSecs: 90},
	})
	t.Cleanup(func() { tryCall("DELETE", java.base+"apps/APPSONLY/apps-1", nil) })
	for name, cfg := range map[string]discovery.Config{
		"Apps":      {Apps: []string{"appsonly"}},
		"LearnApps": {LearnApps: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tap := jsrvNewTap(t, java.base)
			cfg.ServiceURLs, cfg.RegistryFetchInterval = []string{tap.serviceURL()}, time.Second
			c, logs := jsrvClient(t, cfg)
			eventually(t, 10*time.Second, "apps-1 in the local registry", func() (bool, string) {
				return jsrvRoutable(c, "APPSONLY", "apps-1"), jsrvStatus(c, "APPSONLY", "apps-1")
			})
			mark := time.Now()
			var fulls, deltas []jsrvExchange
			eventually(t, 15*time.Second, "four fetches after the local registry held apps-1", func() (bool, string) {
				fulls = jsrvSince(tap.exchanges("GET", "/eureka/apps/"), mark)
				deltas = jsrvSince(tap.exchanges("GET", "/eureka/apps/delta"), mark)
				return len(fulls)+len(deltas) >= 4, fmt.Sprint(len(fulls), " full, ", len(deltas), " deltas")
			})
			if len(fulls) > 0 {
				t.Errorf("with %s, against a server without the watch, %d of the %d fetches after the first were full fetches (GET apps/?%s), want deltas",
					name, len(fulls), len(fulls)+len(deltas), fulls[0].query)
			}
			if w := jsrvWarnings(logs); len(w) > 0 {
				t.Errorf("the client warned:\n%s", strings.Join(w, "\n"))
			}
		})
	}
}

// hudl/fargo against the Java server, in its default XML mode and in
// JSON: register, read back (app, all apps, instance, VIP), heartbeat,
// status override, metadata, deregister.
func jsrvFargo(t *testing.T, java *jsrvServer) {
	t.Cleanup(fargo.HttpClient.CloseIdleConnections)
	for _, useJSON := range []bool{false, true} {
		mode := map[bool]string{false: "XML", true: "JSON"}[useJSON]
		t.Run(mode, func(t *testing.T) {
			conn := fargo.NewConn(strings.TrimSuffix(java.base, "/"))
			conn.UseJson = useJSON
			app, id := "FARGO"+mode, "fargo-"+strings.ToLower(mode)+"-1"
			vip := strings.ToLower(app)
			ins := apisuite.FargoInstance("127.0.0.1", app, vip, vip+"-secure", 9010)
			ins.InstanceId = id
			check := func(what string, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}

			check("RegisterInstance", conn.RegisterInstance(ins))
			if held, code := instanceJSON(t, java.base, app, id); code != 200 || held["status"] != "UP" {
				t.Fatalf("the Java server holds %s/%s: %d %v", app, id, code, held)
			}

			a, err := conn.GetApp(app)
			check("GetApp", err)
			if len(a.Instances) != 1 || a.Instances[0].Id() != id || a.Instances[0].Port != 9010 || !a.Instances[0].PortEnabled ||
				a.Instances[0].SecurePort != 9443 || a.Instances[0].Status != fargo.UP {
				t.Fatalf("GetApp: %+v", a.Instances)
			}
			apps, err := conn.GetApps()
			check("GetApps", err)
			if a := apps[app]; a == nil || len(a.Instances) != 1 {
				t.Fatalf("GetApps: %v", apps)
			}
			got, err := conn.GetInstance(app, id)
			check("GetInstance", err)
			if got.IPAddr != "127.0.0.1" || got.VipAddress != vip || got.HomePageUrl != "http://127.0.0.1:9010/" || got.HostName != "127.0.0.1" {
				t.Fatalf("GetInstance: %+v", got)
			}
			if team, err := got.Metadata.GetString("team"); err != nil || team != "payments" {
				t.Errorf("metadata team = %q, %v", team, err)
			}

			check("HeartBeatInstance", conn.HeartBeatInstance(ins))

			check("UpdateInstanceStatus", conn.UpdateInstanceStatus(ins, fargo.OUTOFSERVICE))
			jsrvHeld(t, java.base, app, id, "OUT_OF_SERVICE", "OUT_OF_SERVICE")
			got, err = conn.GetInstance(app, id)
			check("GetInstance after the status update", err)
			// The Java server's XML writer (V1AwareInstanceInfoConverter,
			// for requests without /v2/ in the path) writes a status its
			// V1 clients did not know, OUT_OF_SERVICE or UNKNOWN, as
			// DOWN; its JSON writer does not. Ours writes OUT_OF_SERVICE
			// in both.
			want := fargo.OUTOFSERVICE
			if !useJSON {
				want = fargo.DOWN
			}
			if got.Status != want || got.Overriddenstatus != fargo.OUTOFSERVICE {
				t.Errorf("after UpdateInstanceStatus: status %q, overridden %q; want %q, %q", got.Status, got.Overriddenstatus, want, fargo.OUTOFSERVICE)
			}

			check("AddMetadataString", conn.AddMetadataString(ins, "zone", "zone-a"))
			got, err = conn.GetInstance(app, id)
			check("GetInstance after the metadata update", err)
			if zone, err := got.Metadata.GetString("zone"); err != nil || zone != "zone-a" {
				t.Errorf("metadata zone = %q, %v", zone, err)
			}
			if team, _ := got.Metadata.GetString("team"); team != "payments" {
				t.Errorf("the metadata update dropped a key: team = %q", team)
			}

			byVIP, err := conn.GetInstancesByVIPAddress(vip, false)
			check("GetInstancesByVIPAddress", err)
			if len(byVIP) != 1 || byVIP[0].Id() != id {
				t.Errorf("by VIP: %+v", byVIP)
			}
			bySVIP, err := conn.GetInstancesByVIPAddress(vip+"-secure", true)
			check("GetInstancesByVIPAddress secure", err)
			if len(bySVIP) != 1 {
				t.Errorf("by secure VIP: %+v", bySVIP)
			}

			check("DeregisterInstance", conn.DeregisterInstance(ins))
			if _, err := conn.GetInstance(app, id); err == nil {
				t.Error("the instance is still readable after DeregisterInstance")
			}
			if err := conn.HeartBeatInstance(ins); err == nil {
				t.Error("a heartbeat of the deregistered instance succeeded")
			}
		})
	}
}

// jsrvJSVersion is the eureka-js-client the test installs.
const jsrvJSVersion = "4.5.0"

// jsrvJSScript registers an instance with eureka-js-client, heartbeats
// and fetches every second (deltas after the first, shouldUseDelta), and
// prints its view of two applications (VIEW {...}) whenever it changes;
// on SIGTERM it deregisters (STOPPED) and exits.
const jsrvJSScript = `'use strict';
const { Eureka } = require('eureka-js-client');
const [host, port, app, id, appPort, peerApp] = process.argv.slice(2);
const say = (...a) => console.log(a.map(String).join(' '));
const client = new Eureka({
  logger: {
    debug() {},
    info(...a) { say('INFO', ...a); },
    warn(...a) { const s = a.map(String).join(' '); if (!/Unable to retrieve/.test(s)) say('WARN', s); },
    error(...a) { say('ERROR', ...a); },
  },
  shouldUseDelta: true,
  instance: {
    app, instanceId: id, hostName: '127.0.0.1', ipAddr: '127.0.0.1',
    statusPageUrl: 'http://127.0.0.1:' + appPort + '/info',
    port: { '$': Number(appPort), '@enabled': 'true' },
    vipAddress: app.toLowerCase(),
    dataCenterInfo: { '@class': 'com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo', name: 'MyOwn' },
  },
  eureka: {
    host, port: Number(port), servicePath: '/eureka/apps/',
    heartbeatInterval: 1000, registryFetchInterval: 1000, maxRetries: 0, fetchMetadata: false,
  },
});
let last = '', timer;
const ids = (a) => (client.cache.app[a] || []).map((i) => i.instanceId + ':' + i.status).sort();
const view = () => {
  const v = JSON.stringify({ [app]: ids(app), [peerApp]: ids(peerApp) });
  if (v !== last) { last = v; say('VIEW', v); }
};
client.on('heartbeat', () => say('HEARTBEAT'));
client.start((err) => {
  if (err) { say('STARTFAILED', err); process.exit(1); }
  say('STARTED');
  view();
  timer = setInterval(view, 100);
});
process.on('SIGTERM', () => {
  clearInterval(timer);
  client.stop((err) => { say(err ? 'STOPFAILED ' + err : 'STOPPED'); process.exit(0); });
});
`

// jsrvRequireNode skips the test, saying what is missing, without node or
// npm; under CI (CI=true) it fails instead.
func jsrvRequireNode(t *testing.T) {
	t.Helper()
	var missing []string
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("interop: %s not found; install Node.js with npm to run eureka-js-client against the Java server", strings.Join(missing, " and "))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// jsrvInstallJS installs eureka-js-client into a temporary directory and
// writes the script there; it returns the script's path.
func jsrvInstallJS(t *testing.T) string {
	t.Helper()
	jsrvRequireNode(t)
	dir := t.TempDir()
	pkg := `{"name":"interop-eureka-js","private":true,"dependencies":{"eureka-js-client":"` + jsrvJSVersion + `"}}`
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pkg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install eureka-js-client@%s: %v\n%s", jsrvJSVersion, err, out)
	}
	script := filepath.Join(dir, "client.js")
	if err := os.WriteFile(script, []byte(jsrvJSScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return script
}

// jsrvRegisterRaw registers inst with the server at base through the REST
// API, as JSON.
func jsrvRegisterRaw(t *testing.T, base string, inst *eureka.InstanceInfo) {
	t.Helper()
	code, body := call(t, "POST", base+"apps/"+inst.App, strings.NewReader(string(eureka.AppendInstanceJSON(nil, inst))),
		"Content-Type", "application/json")
	if code != 204 {
		t.Fatalf("registering %s/%s: %d %s", inst.App, inst.InstanceID, code, body)
	}
}

// eureka-js-client against the Java server: it registers (204, and the
// server holds its host, port and VIP), heartbeats, fetches the registry in full and then
// by deltas (an instance registered and cancelled by someone else comes
// and goes), and deregisters when it stops.
func jsrvJSClient(t *testing.T, java *jsrvServer) {
	script := jsrvInstallJS(t)
	u, _ := url.Parse(java.base)
	js := start(t, "eureka-js-client", "node", script, u.Hostname(), u.Port(), "JSAPP", "js-1", "9020", "JSPEER")
	js.await(`^STARTED$`, 30*time.Second)

	held, code := instanceJSON(t, java.base, "JSAPP", "js-1")
	if code != 200 || held["status"] != "UP" || held["hostName"] != "127.0.0.1" || held["vipAddress"] != "jsapp" ||
		fmt.Sprint(held["port"].(map[string]any)["$"]) != "9020" {
		t.Fatalf("the Java server holds JSAPP/js-1: %d %v", code, held)
	}
	first := held["leaseInfo"].(map[string]any)["lastRenewalTimestamp"]
	js.await(`^HEARTBEAT$`, 10*time.Second)
	eventually(t, 5*time.Second, "the lease renewed", func() (bool, string) {
		got, _ := instanceJSON(t, java.base, "JSAPP", "js-1")
		last := got["leaseInfo"].(map[string]any)["lastRenewalTimestamp"]
		return fmt.Sprint(last) != fmt.Sprint(first), fmt.Sprint(last)
	})
	js.await(`^VIEW \{"JSAPP":\["js-1:UP"\],"JSPEER":\[\]\}$`, 10*time.Second)

	// Another instance, registered through the REST API, reaches it by a
	// delta (ADDED), and leaves by one (DELETED).
	jsrvRegisterRaw(t, java.base, &eureka.InstanceInfo{
		InstanceID: "peer-1", HasInstanceID: true, HostName: "127.0.0.1", App: "JSPEER", IPAddr: "127.0.0.1",
		VIPAddress: "jspeer", Status: eureka.StatusUp, Port: eureka.Port{Number: 9021, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
		LeaseInfo:      eureka.LeaseInfo{RenewalIntervalInSecs: 30, DurationInSecs: 90},
	})
	js.await(`^VIEW \{"JSAPP":\["js-1:UP"\],"JSPEER":\["peer-1:UP"\]\}$`, 10*time.Second)
	if code, body := call(t, "DELETE", java.base+"apps/JSPEER/peer-1", nil); code != 200 {
		t.Fatalf("cancelling JSPEER/peer-1: %d %s", code, body)
	}
	// (await reads the output from its start: count the second such view.)
	eventually(t, 10*time.Second, "eureka-js-client's view without peer-1 again", func() (bool, string) {
		n := js.count(`^VIEW \{"JSAPP":\["js-1:UP"\],"JSPEER":\[\]\}$`)
		return n == 2, fmt.Sprint(n)
	})

	js.stop()
	if js.count(`^STOPPED$`) != 1 {
		t.Errorf("eureka-js-client did not deregister")
	}
	jsrvGone(t, java.base, "JSAPP", "js-1")
	if n := js.count(`^(WARN|ERROR|STARTFAILED|STOPFAILED)`); n != 0 {
		t.Errorf("eureka-js-client logged %d warnings or errors", n)
	}
}

// jsrvCaddyGateway runs Caddy in this process with the eureka app in
// remote mode against serviceURL (fetching every second: the Java server
// offers no watch) and eureka_gateway on a loopback port; admin off, no
// config persisted, storage in a temporary directory. It returns the
// gateway's base URL. Caddy is process-wide: one config at a time, so no
// other test may run Caddy in parallel with this one.
func jsrvCaddyGateway(t *testing.T, serviceURL string) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	jsrvCaddy(t, serviceURL, nil, map[string]any{"servers": map[string]any{"gateway": map[string]any{
		"listen":          []string{addr},
		"automatic_https": map[string]any{"disable": true},
		"routes":          []any{map[string]any{"handle": []any{map[string]any{"handler": "eureka_gateway"}}}},
	}}})
	return "http://" + addr
}

// jsrvCaddy loads Caddy as jsrvCaddyGateway says, the eureka app in
// remote mode against serviceURL with the options extra beside, and the
// http app httpApp (nil: none), until the test ends.
func jsrvCaddy(t *testing.T, serviceURL string, extra, httpApp map[string]any) {
	t.Helper()
	eurekaApp := map[string]any{"registry": "interop-java-server", "remote": []string{serviceURL}, "fetch_interval": "1s"}
	maps.Copy(eurekaApp, extra)
	apps := map[string]any{
		"eureka": eurekaApp,
		// No storage cleaning: it locks a file in the storage, and
		// the goroutine that keeps the lock fresh outlives
		// caddy.Stop by up to 5 s (goleak would report it).
		"tls": map[string]any{"disable_storage_clean": true},
	}
	if httpApp != nil {
		apps["http"] = httpApp
	}
	cfg := map[string]any{
		"admin":   map[string]any{"disabled": true, "config": map[string]any{"persist": false}},
		"storage": map[string]any{"module": "file_system", "root": t.TempDir()},
		"logging": map[string]any{"logs": map[string]any{"default": map[string]any{"level": "WARN"}}},
		"apps":    apps,
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := caddy.Load(js, true); err != nil {
		t.Fatalf("loading Caddy: %v\n%s", err, js)
	}
	t.Cleanup(func() { caddy.Stop() })
}

// Both our gateways, reading the Java server, route /orders/hello to a
// Spring client registered there: the fasthttp gateway over a discovery
// client, and Caddy's eureka_gateway in remote mode. An OUT_OF_SERVICE
// set through the client's actuator takes it out of both rotations and UP
// brings it back; its graceful shutdown (a cancel) leaves no route.
func jsrvGateways(t *testing.T, java *jsrvServer) {
	c := startSpringClient(t, "orders", "orders-1", java.base)

	dc, logs := jsrvClient(t, discovery.Config{ServiceURLs: []string{java.base}, RegistryFetchInterval: time.Second})
	g, err := gateway.New(gateway.Config{Routing: routing.Config{Instances: dc}})
	if err != nil {
		t.Fatal(err)
	}
	srv := gateway.NewServer(g, gateway.ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.StopOnCleanup(t, 10*time.Second, func(ctx context.Context) {
		srv.Stop(ctx)
		g.Close()
	})
	gateways := map[string]string{"fasthttp gateway": "http://" + srv.Addr().String(), "Caddy's eureka_gateway": jsrvCaddyGateway(t, java.base)}

	routed := func(base string, want int) func() (bool, string) {
		return func() (bool, string) {
			status, body, err := tryCall("GET", base+"/orders/hello", nil)
			return err == nil && status == want && (want != 200 || body == "orders-1"), fmt.Sprint(status, " ", body, " ", err)
		}
	}
	for name, base := range gateways {
		eventually(t, 15*time.Second, name+" routes /orders/hello to orders-1", routed(base, 200))
	}

	setStatus := func(status string) {
		t.Helper()
		code, body := call(t, "POST", c.url("/actuator/serviceregistry"), strings.NewReader(`{"status":"`+status+`"}`), "Content-Type", "application/json")
		if code/100 != 2 {
			t.Fatalf("POST /actuator/serviceregistry %s: %d %s", status, code, body)
		}
	}
	setStatus("OUT_OF_SERVICE")
	jsrvHeld(t, java.base, "ORDERS", "orders-1", "OUT_OF_SERVICE", "OUT_OF_SERVICE")
	for name, base := range gateways {
		eventually(t, 10*time.Second, name+": orders-1 out of rotation", routed(base, 503))
		_, body, _ := tryCall("GET", base+"/orders/hello", nil)
		t.Logf("%s with orders-1 OUT_OF_SERVICE: 503 %q", name, strings.TrimSpace(body))
	}
	setStatus("UP")
	jsrvHeld(t, java.base, "ORDERS", "orders-1", "UP", "")
	for name, base := range gateways {
		eventually(t, 10*time.Second, name+": orders-1 back in rotation", routed(base, 200))
	}

	c.stop()
	if c.count(`deregister\s+status: 200`) != 1 {
		t.Errorf("the Spring client did not deregister with 200")
	}
	jsrvGone(t, java.base, "ORDERS", "orders-1")
	// (The Spring client re-registers as DOWN before it cancels: "no UP
	// instance" first, then no application.)
	for name, base := range gateways {
		eventually(t, 10*time.Second, name+": no application after the cancel", func() (bool, string) {
			status, body, err := tryCall("GET", base+"/orders/hello", nil)
			return err == nil && status == 503 && strings.Contains(body, `no application "orders"`), fmt.Sprint(status, " ", body, " ", err)
		})
	}
	if w := jsrvWarnings(logs); len(w) > 0 {
		t.Errorf("the gateway's discovery client warned:\n%s", strings.Join(w, "\n"))
	}
}
