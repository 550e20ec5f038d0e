package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/registrytest"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/regions"
	"github.com/eurekagate/eurekagate/registry/regions/feeds"
)

// This file runs Eureka's remote regions between Java and us: a Spring
// Boot client fetching a remote region (fetch-remote-regions-registry)
// from our server, and one of our nodes reading the Java Eureka server
// (java/server) as a remote region. The helpers are prefixed rgn.

// rgnNode is one of our registry nodes, run in this process: a Store and
// its HTTP API on a loopback port.
type rgnNode struct {
	store *registry.Store
	base  string // its service URL, http://127.0.0.1:port/eureka/
}

// rgnStartNode runs a Store with cfg behind our HTTP API until the test
// ends.
func rgnStartNode(t *testing.T, cfg registry.Config) *rgnNode {
	t.Helper()
	store := registry.New(cfg)
	store.Start()
	t.Cleanup(store.Stop)
	srv := registrytest.Start(t, store, httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	return &rgnNode{store: store, base: srv.URL()}
}

// rgnStartFeeds reads the remote region name from serviceURL into store,
// every interval against a server without the watch, until the test ends.
func rgnStartFeeds(t *testing.T, store *registry.Store, name, serviceURL string, interval time.Duration) *feeds.Feeds {
	t.Helper()
	feeds, err := feeds.New(store, feeds.Config{
		Remotes:       []feeds.Remote{{Name: name, URLs: []string{serviceURL}}},
		FetchInterval: interval,
	})
	if err != nil {
		t.Fatal(err)
	}
	feeds.Start()
	testkit.StopOnCleanup(t, 15*time.Second, func(ctx context.Context) {
		if err := feeds.Stop(ctx); err != nil {
			t.Errorf("stopping the feeds: %v", err)
		}
	})
	return feeds
}

// rgnBackend is an HTTP server answering every request with id, as the
// client project's /hello answers with its instance id.
func rgnBackend(t *testing.T, id string) int {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, id) }))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// rgnInstance is an UP instance of app on 127.0.0.1:port with a lease
// that outlasts the test. With zone it is in Amazon's data center, in
// that availability zone (the one thing Java's client places an instance
// in a region by); without, in MyOwn, which Java's client takes for its
// own region's.
func rgnInstance(app, id string, port int, zone string) *eureka.InstanceInfo {
	dc := eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}
	if zone != "" {
		dc = eureka.DataCenterInfo{Name: eureka.DataCenterAmazon, Metadata: map[string]string{
			"availability-zone": zone, "instance-id": id, "local-ipv4": "127.0.0.1", "public-hostname": "127.0.0.1",
		}}
	}
	return &eureka.InstanceInfo{
		InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", App: app, IPAddr: "127.0.0.1",
		VIPAddress: strings.ToLower(app), Status: eureka.StatusUp, Port: eureka.Port{Number: port, Enabled: true},
		DataCenterInfo: dc, LeaseInfo: eureka.LeaseInfo{RenewalIntervalInSecs: 30, DurationInSecs: 600},
	}
}

// rgnCancel cancels app/id at the server at base.
func rgnCancel(t *testing.T, base, app, id string) {
	t.Helper()
	if code, body := call(t, "DELETE", base+"apps/"+app+"/"+id, nil); code != 200 {
		t.Fatalf("cancelling %s/%s: %d %s", app, id, code, body)
	}
}

// rgnRegions is the regions parameter of a recorded request.
func rgnRegions(x recorded) string {
	q, _ := url.ParseQuery(x.query)
	return q.Get("regions")
}

// rgnFetches are the full fetches (GET apps/) and deltas the recorder saw,
// in the order they arrived.
func rgnFetches(rec *recorder) (full, delta []recorded) {
	return append(rec.exchanges("GET", "/eureka/apps/"), rec.exchanges("GET", "/eureka/apps")...),
		rec.exchanges("GET", "/eureka/apps/delta")
}

// rgnHealthApps is details.applications of the eureka health indicator
// of the Spring client: the instances (UP) per app in its local region,
// as it holds them.
func rgnHealthApps(c *springClient) (map[string]int, string) {
	status, body, err := tryCall("GET", c.url("/actuator/health"), nil)
	if err != nil || status != 200 {
		return nil, fmt.Sprint(status, " ", body, " ", err)
	}
	var doc any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		return nil, body
	}
	// components.discoveryComposite.components.eureka.details.applications,
	// found wherever it nests.
	var find func(v any) map[string]any
	find = func(v any) map[string]any {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if e, ok := m["eureka"].(map[string]any); ok {
			if d, ok := e["details"].(map[string]any); ok {
				if a, ok := d["applications"].(map[string]any); ok {
					return a
				}
			}
		}
		for _, c := range m {
			if a := find(c); a != nil {
				return a
			}
		}
		return nil
	}
	apps := find(doc)
	if apps == nil {
		return nil, body
	}
	out := map[string]int{}
	for k, v := range apps {
		if n, ok := v.(float64); ok {
			out[k] = int(n)
		}
	}
	return out, body
}

// A Spring Boot client with fetch-remote-regions-registry=eu-west against
// our node, which serves eu-west as a remote region read (with
// registry/regions/feeds) from another node of ours, the eu-west cluster, where
// two apps are registered and nowhere else: EUAPP in MyOwn's data center,
// EUAMZ in Amazon's availability zone eu-west-1a.
//
//   - Every fetch the client makes, full or delta, asks for regions=eu-west;
//     until our node has read eu-west they are refused 403, then answered 200.
//   - Java's client places an instance in a region by its Amazon
//     availability zone only (eureka.client.availability-zones maps
//     eu-west-1a to eu-west; without zones for a region it fetches, and
//     outside its built-in AWS table, its AbstractAzToRegionMapper throws),
//     and takes any other for its own region's: so EUAPP is among its local
//     apps (an lb:// call reaches it) and EUAMZ is in its eu-west registry,
//     not among its local apps.
//   - Changes in eu-west (an instance of each app added, EUAPP's first
//     cancelled) reach it by deltas whose hash, over its local and eu-west
//     instances, matches ours: it logs no reconcile mismatch and our node
//     counts no full fetch after its first (Store.Totals).
//
// On both springLines (RestTemplate and RestClient transports).
func TestSpringClientFetchesRemoteRegion(t *testing.T) {
	requireJava(t)
	t.Parallel()
	for _, line := range springLines {
		t.Run(line.name, func(t *testing.T) {
			t.Parallel()
			testFetchRemoteRegion(t, line.project)
		})
	}
}

func testFetchRemoteRegion(t *testing.T, project string) {
	eu := rgnStartNode(t, registry.Config{Region: "eu-west"})
	for _, inst := range []*eureka.InstanceInfo{
		rgnInstance("EUAPP", "eu-app-1", rgnBackend(t, "eu-app-1"), ""),
		rgnInstance("EUAMZ", "eu-amz-1", rgnBackend(t, "eu-amz-1"), "eu-west-1a"),
	} {
		jsrvRegisterRaw(t, eu.base, inst)
	}
	ours := rgnStartNode(t, registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}}})
	rec := newRecorder(t, ours.base)

	c := startSpringClientOf(t, project, "orders", "orders-1", rec.serviceURL(),
		"--eureka.client.fetch-remote-regions-registry=eu-west",
		"--eureka.client.availability-zones.eu-west=eu-west-1a",
		"--management.endpoint.health.show-details=always")

	// Before our node has read eu-west, the client is refused.
	eventually(t, 10*time.Second, "a full fetch with regions=eu-west refused 403", func() (bool, string) {
		full, _ := rgnFetches(rec)
		return slices.ContainsFunc(full, func(x recorded) bool { return rgnRegions(x) == "eu-west" && x.status == 403 }), fmt.Sprintf("%+v", full)
	})
	rgnStartFeeds(t, ours.store, "eu-west", eu.base, time.Second)
	readyAt := time.Now()

	eventually(t, 20*time.Second, "lb://euapp answered by eu-west's EUAPP", func() (bool, string) {
		status, body, err := tryCall("GET", c.url("/call/euapp"), nil)
		return err == nil && status == 200 && body == "eu-app-1", fmt.Sprint(status, " ", body, " ", err)
	})
	full, _ := rgnFetches(rec)
	if !slices.ContainsFunc(jsrvSince(full, readyAt), func(x recorded) bool { return rgnRegions(x) == "eu-west" && x.status == 200 }) {
		t.Errorf("no full fetch with regions=eu-west answered 200 once eu-west was ready: %+v", full)
	}
	// Our node serves EUAMZ to a read with regions=eu-west (and so sent it
	// to the client's full fetch); the client keeps it out of its local
	// apps.
	if code, body := call(t, "GET", ours.base+"apps/?regions=eu-west", nil, "Accept", "application/json"); code != 200 || !strings.Contains(body, `"eu-amz-1"`) {
		t.Fatalf("GET apps/?regions=eu-west from our node: %d %s", code, body)
	}
	apps, body := rgnHealthApps(c)
	if apps["EUAPP"] != 1 || apps["ORDERS"] != 1 || apps["EUAMZ"] != 0 {
		t.Errorf("the client's local apps: %v, want EUAPP and ORDERS with one instance each and no EUAMZ (in eu-west); health: %s", apps, body)
	}
	if status, body, err := tryCall("GET", c.url("/call/euamz"), nil); err != nil || status == 200 {
		t.Errorf("lb://euamz, of eu-west's availability zone, answered %d %q (%v); want no local instance", status, body, err)
	}

	// From its first delta on, eu-west's changes come by deltas.
	c.await(`Got delta update with apps hashcode`, 15*time.Second)
	fullBefore, deltasBefore := ours.store.Stats().Totals().FullFetches, c.count(`Got delta update with apps hashcode`)
	since := time.Now()
	jsrvRegisterRaw(t, eu.base, rgnInstance("EUAPP", "eu-app-2", rgnBackend(t, "eu-app-2"), ""))
	jsrvRegisterRaw(t, eu.base, rgnInstance("EUAMZ", "eu-amz-2", rgnBackend(t, "eu-amz-2"), "eu-west-1a"))
	eventually(t, 10*time.Second, "the client holds eu-app-2", func() (bool, string) {
		apps, body := rgnHealthApps(c)
		return apps["EUAPP"] == 2, body
	})
	rgnCancel(t, eu.base, "EUAPP", "eu-app-1")
	eventually(t, 10*time.Second, "the client no longer holds eu-app-1", func() (bool, string) {
		apps, body := rgnHealthApps(c)
		return apps["EUAPP"] == 1, body
	})
	for i := 0; i < 3; i++ { // the LoadBalancer's cache lives a second
		eventually(t, 10*time.Second, "lb://euapp answered by eu-app-2 only", func() (bool, string) {
			status, body, err := tryCall("GET", c.url("/call/euapp"), nil)
			return err == nil && status == 200 && body == "eu-app-2", fmt.Sprint(status, " ", body, " ", err)
		})
	}
	eventually(t, 10*time.Second, "three more deltas", func() (bool, string) {
		n := c.count(`Got delta update with apps hashcode`) - deltasBefore
		return n >= 3, fmt.Sprint(n)
	})
	if n := ours.store.Stats().Totals().FullFetches - fullBefore; n != 0 {
		t.Errorf("our node answered %d full fetches during the client's deltas, want 0", n)
	}
	if n := c.count(`Reconcile hashcodes do not match`); n != 0 {
		t.Errorf("the Spring client logged %d reconcile hash mismatches", n)
	}
	if n := countAfter(c.proc, `Got delta update with apps hashcode`, `Getting all instance registry info from the eureka server`); n != 0 {
		t.Errorf("the Spring client fell back to %d full fetches after its first delta", n)
	}
	apps, body = rgnHealthApps(c)
	if apps["EUAMZ"] != 0 {
		t.Errorf("eu-west's EUAMZ, added by a delta, is among the client's local apps: %s", body)
	}
	full, deltas := rgnFetches(rec)
	if len(jsrvSince(deltas, since)) == 0 {
		t.Errorf("no delta since the changes: %+v", deltas)
	}
	for _, x := range append(full, deltas...) {
		if rgnRegions(x) != "eu-west" {
			t.Errorf("a fetch without regions=eu-west: GET %s?%s", x.path, x.query)
		}
	}
	for _, x := range jsrvSince(deltas, readyAt) {
		if x.status != 200 {
			t.Errorf("a delta with regions=eu-west answered %d once eu-west was ready", x.status)
		}
	}
	byStatus := func(xs []recorded) map[int]int {
		m := map[int]int{}
		for _, x := range xs {
			m[x.status]++
		}
		return m
	}
	t.Logf("the client's fetches with regions=eu-west: full %v, deltas %v (by status); its local apps %v",
		byStatus(full), byStatus(deltas), apps)
}

// One of our nodes reads the Java Eureka server as its remote region
// java-region (registry/regions/feeds, polling every second: the Java server has
// no watch): an instance registered there is in our Store's
// InstancesIn(app, "java-region") and in our GET apps/?regions=java-region
// (with a hash over what it answers), not in our local registry; a read
// asking for the region before it was read is refused 403; and a cancel
// at the Java server leaves our node within rgnCancelBound.
func TestOurNodeReadsJavaServerAsRemoteRegion(t *testing.T) {
	requireJava(t)
	t.Parallel()
	java := jsrvStartServer(t)
	jsrvRegisterRaw(t, java.base, rgnInstance("JAPP", "japp-1", rgnBackend(t, "japp-1"), ""))
	ours := rgnStartNode(t, registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "java-region"}}})

	if code, body := call(t, "GET", ours.base+"apps/?regions=java-region", nil, "Accept", "application/json"); code != 403 {
		t.Errorf("GET apps/?regions=java-region before the region was read: %d %s, want 403", code, body)
	}
	const interval = time.Second
	rgnStartFeeds(t, ours.store, "java-region", java.base, interval)

	holds := func(ids ...string) func() (bool, string) {
		return func() (bool, string) {
			var got []string
			for _, i := range regions.MirrorOf(ours.store).InstancesIn("JAPP", "java-region") {
				got = append(got, i.ID())
			}
			return slices.Equal(got, ids), fmt.Sprint(got)
		}
	}
	eventually(t, 10*time.Second, "japp-1 in java-region", holds("japp-1"))
	if got := regions.MirrorOf(ours.store).InstancesIn("JAPP", ""); len(got) != 0 {
		t.Errorf("java-region's JAPP among our local instances: %v", got)
	}
	// The merged read: JAPP from java-region, with the hash of all of it;
	// the local read has no JAPP.
	readApps := func(query string) *eureka.Applications {
		t.Helper()
		code, body := call(t, "GET", ours.base+"apps/"+query, nil, "Accept", "application/json")
		if code != 200 {
			t.Fatalf("GET apps/%s from our node: %d %s", query, code, body)
		}
		doc, err := eureka.DecodeApplicationsJSON([]byte(body))
		if err != nil {
			t.Fatalf("GET apps/%s: %v: %s", query, err, body)
		}
		return doc
	}
	ids := func(doc *eureka.Applications, app string) []string {
		var out []string
		for _, a := range doc.Applications {
			if a.Name == app {
				for _, i := range a.Instances {
					out = append(out, i.ID())
				}
			}
		}
		slices.Sort(out)
		return out
	}
	merged := readApps("?regions=java-region")
	if got := ids(merged, "JAPP"); !slices.Equal(got, []string{"japp-1"}) {
		t.Errorf("GET apps/?regions=java-region: JAPP %v, want [japp-1]", got)
	}
	if h := eureka.ReconcileHash(merged.Applications); h != merged.AppsHashcode || h != "UP_1_" {
		t.Errorf("GET apps/?regions=java-region: hash %q, what it holds counts to %q, want UP_1_", merged.AppsHashcode, h)
	}
	if got := ids(readApps(""), "JAPP"); len(got) != 0 {
		t.Errorf("GET apps/ (no regions): JAPP %v, want none", got)
	}

	// A registration and a cancel at the Java server, read by deltas.
	jsrvRegisterRaw(t, java.base, rgnInstance("JAPP", "japp-2", rgnBackend(t, "japp-2"), ""))
	eventually(t, 10*time.Second, "japp-2 in java-region", holds("japp-1", "japp-2"))
	rgnCancel(t, java.base, "JAPP", "japp-1")
	cancelled := time.Now()
	eventually(t, rgnCancelBound(interval), "japp-1 gone from java-region", holds("japp-2"))
	t.Logf("a cancel at the Java server left our node's java-region in %v (bound %v)",
		time.Since(cancelled).Round(10*time.Millisecond), rgnCancelBound(interval))
	if got := ids(readApps("?regions=java-region"), "JAPP"); !slices.Equal(got, []string{"japp-2"}) {
		t.Errorf("GET apps/?regions=java-region after the cancel: JAPP %v, want [japp-2]", got)
	}
	for _, s := range regions.MirrorOf(ours.store).States() {
		if s.Name == "java-region" && (!s.Ready || s.Dropped || s.Instances != 1 || s.Failures != 0) {
			t.Errorf("java-region's state: %+v", s)
		}
	}
}

// rgnCancelBound is how soon a cancel at the Java server must leave our
// node's copy of it: the Java server's response-cache delay (none:
// jsrvStartServer turns the read-only cache off, and a cancel invalidates
// the read-write one at once), plus our fetch interval, plus two seconds
// for the round trip and the scheduling of processes sharing two cores.
func rgnCancelBound(interval time.Duration) time.Duration { return interval + 2*time.Second }
