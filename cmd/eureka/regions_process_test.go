package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/routing"
)

// Two regions of two nodes each, every node a process of this command on
// loopback: us-east-1 (A1, A2, peers of each other) and eu-west (B1, B2),
// each region's nodes reading the other region as a remote region, from
// both its nodes. A1 also serves a gateway that fails over to eu-west. A3,
// a us-east-1 node of its own (no peers), reads eu-west with a whitelist
// (BILLING only), without the transparent fallback and with a short
// retention, and a third region, ap-south, whose server is not up yet.
//
// The subtests share the processes and run in order: the last one stops
// eu-west. Every wait polls with a deadline: the remote regions are read
// through the watch (a change reaches the other region within a round
// trip), and a failed read is retried after -remote-region-fetch-interval
// (1s here).
func TestRegionsProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six registry processes")
	}
	c := startRegions(t)

	t.Run("UnionReads", c.unionReads)
	t.Run("NotReady", c.notReady)
	t.Run("TransparentFallback", c.transparentFallback)
	t.Run("DeltaAndWatch", c.deltaAndWatch)
	t.Run("GatewayFailover", c.gatewayFailover)
	t.Run("RegionStopsAnswering", c.regionStops)
}

// regionCluster is the processes, what each region holds, and the
// backends of ORDERS, which answer their region.
type regionCluster struct {
	bin                  string
	a1, a2, a3, b1, b2   *process
	apSouth              string // ap-south's address, where nothing listens until notReady starts it
	usBackend, euBackend *httptest.Server
	usPort, euPort       int
	client               *http.Client
	// us, eu and a3Local are the instance ids that us-east-1, eu-west
	// and A3 (its own) hold, by app, as the subtests leave them.
	mu          sync.Mutex
	us, eu      map[string][]string
	a3Local     map[string][]string
	euWhitelist []string // A3's whitelist of eu-west's apps
}

const (
	usEast = "us-east-1"
	euWest = "eu-west"
)

func startRegions(t *testing.T) *regionCluster {
	t.Helper()
	c := &regionCluster{
		bin:    binary(t),
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}},
		us:     map[string][]string{}, eu: map[string][]string{}, a3Local: map[string][]string{},
		euWhitelist: []string{"BILLING"},
	}
	t.Cleanup(c.client.CloseIdleConnections)
	backend := func(region string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s header=%s", region, r.Header.Get(routing.RegionHeader))
		}))
		t.Cleanup(s.Close)
		return s
	}
	c.usBackend, c.euBackend = backend(usEast), backend(euWest)
	c.usPort = c.usBackend.Listener.Addr().(*net.TCPAddr).Port
	c.euPort = c.euBackend.Listener.Addr().(*net.TCPAddr).Port

	addrs := map[string]string{} // held apart until the test ends (testkit.FreeAddr)
	for _, n := range []string{"A1", "A2", "A3", "B1", "B2", "ap"} {
		addrs[n] = testkit.FreeAddr(t)
	}
	c.apSouth = addrs["ap"]
	svc := func(n string) string { return "http://" + addrs[n] + "/eureka/" }
	aPeers := svc("A1") + "," + svc("A2")
	bPeers := svc("B1") + "," + svc("B2")
	toEU := euWest + "=" + svc("B1") + "," + euWest + "=" + svc("B2")
	toUS := usEast + "=" + svc("A1") + "," + usEast + "=" + svc("A2")
	common := []string{"-dashboard-path", "off", "-remote-region-fetch-interval", "1s"}
	node := func(gateway bool, addr string, args ...string) *process {
		return startProcessFor(t, 90*time.Second, c.bin, gateway, append(append([]string{"-addr", addr}, common...), args...)...)
	}

	// us-east-1 first: until eu-west is up, a read that asks for it is
	// refused (NotReady checks more of it on A3's ap-south, down longer).
	c.a1 = node(true, addrs["A1"], "-region", usEast, "-peers", aPeers, "-remote-regions", toEU,
		"-gateway", "127.0.0.1:0", "-gateway-failover-regions", euWest)
	c.a2 = node(false, addrs["A2"], "-region", usEast, "-peers", aPeers, "-remote-regions", toEU)
	c.waitReads(t, c.a1, c.a2)
	if st, _ := c.get(t, c.a1.registry+"/eureka/apps?regions="+euWest); st != http.StatusForbidden {
		t.Errorf("regions=eu-west on A1 before eu-west is up: %d, want 403", st)
	}
	c.a3 = node(false, addrs["A3"], "-region", usEast,
		"-remote-regions", toEU+",ap-south=http://"+c.apSouth+"/eureka/",
		"-remote-region-apps", euWest+"="+strings.Join(c.euWhitelist, ","),
		"-disable-transparent-fallback", "-remote-region-retention", "3s")
	c.b1 = node(false, addrs["B1"], "-region", euWest, "-peers", bPeers, "-remote-regions", toUS)
	c.b2 = node(false, addrs["B2"], "-region", euWest, "-peers", bPeers, "-remote-regions", toUS)
	c.waitReads(t, c.a3, c.b1, c.b2)

	// us-east-1: ORDERS on two instances (one registered on each node),
	// PAYMENTS; eu-west: ORDERS, BILLING; A3: INVENTORY.
	c.register(t, c.a1, usEast, "ORDERS", "orders-us-1", c.usPort)
	c.register(t, c.a2, usEast, "ORDERS", "orders-us-2", c.usPort)
	c.register(t, c.a1, usEast, "PAYMENTS", "payments-us-1", 1)
	c.register(t, c.b1, euWest, "ORDERS", "orders-eu-1", c.euPort)
	c.register(t, c.b2, euWest, "BILLING", "billing-eu-1", 1)
	c.register(t, c.a3, "a3", "INVENTORY", "inventory-a3-1", 1)
	// Replicated within each region, read across.
	for _, p := range []*process{c.a1, c.a2} {
		c.eventually(t, "us-east-1's node to hold its region and eu-west's", func() bool {
			return c.holds(t, p, "?regions="+euWest, merge(c.us, c.eu))
		})
	}
	for _, p := range []*process{c.b1, c.b2} {
		c.eventually(t, "eu-west's node to hold its region and us-east-1's", func() bool {
			return c.holds(t, p, "?regions="+usEast, merge(c.eu, c.us))
		})
	}
	c.eventually(t, "A3 to hold its own and eu-west's whitelisted apps", func() bool {
		return c.holds(t, c.a3, "?regions="+euWest, merge(c.a3Local, only(c.eu, c.euWhitelist)))
	})
	return c
}

// waitReads waits until each node answers plain reads: its start-up sync
// with its peers is done.
func (c *regionCluster) waitReads(t *testing.T, ps ...*process) {
	t.Helper()
	for _, p := range ps {
		c.eventually(t, "a node to answer reads", func() bool {
			st, _ := c.get(t, p.registry+"/eureka/apps")
			return st == http.StatusOK
		})
	}
}

func (c *regionCluster) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.EventuallyEvery(t, 15*time.Second, 20*time.Millisecond, what, cond)
}

// register registers app/id on p, UP on 127.0.0.1:port, and notes it as
// region's (us-east-1, eu-west, or "a3" for A3's own; any other is not
// followed).
func (c *regionCluster) register(t *testing.T, p *process, region, app, id string, port int) {
	t.Helper()
	inst := &eureka.InstanceInfo{InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", App: app, IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: port, Enabled: true}, VIPAddress: strings.ToLower(app),
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}}
	st := c.send(t, http.MethodPost, p.registry+"/eureka/apps/"+app, string(eureka.AppendInstanceJSON(nil, inst)))
	if st != http.StatusNoContent {
		t.Fatalf("register %s/%s: %d", app, id, st)
	}
	c.note(region, app, id, true)
}

// cancel cancels app/id on p and notes it.
func (c *regionCluster) cancel(t *testing.T, p *process, region, app, id string) {
	t.Helper()
	if st := c.send(t, http.MethodDelete, p.registry+"/eureka/apps/"+app+"/"+id, ""); st != http.StatusOK {
		t.Fatalf("cancel %s/%s: %d", app, id, st)
	}
	c.note(region, app, id, false)
}

func (c *regionCluster) note(region, app, id string, add bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]map[string][]string{usEast: c.us, euWest: c.eu, "a3": c.a3Local}[region]
	if m == nil {
		return // a region the subtests do not follow
	}
	ids := slices.DeleteFunc(m[app], func(s string) bool { return s == id })
	if add {
		ids = append(ids, id)
		slices.Sort(ids)
	}
	if len(ids) == 0 {
		delete(m, app)
	} else {
		m[app] = ids
	}
}

func (c *regionCluster) send(t *testing.T, method, u, body string) int {
	t.Helper()
	resp, _ := testkit.Do(t, c.client, testkit.JSONRequest(t, method, u, body))
	return resp.StatusCode
}

// get reads u as JSON and returns the status and the body; a request that
// fails (a node stopped) is status 0.
func (c *regionCluster) get(t *testing.T, u string) (int, string) {
	t.Helper()
	st, body, _ := c.getHeader(t, u)
	return st, body
}

func (c *regionCluster) getHeader(t *testing.T, u string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err.Error(), nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error(), nil
	}
	return resp.StatusCode, string(body), resp.Header
}

// apps reads the registry document at u (200 expected).
func (c *regionCluster) apps(t *testing.T, u string) *eureka.Applications {
	t.Helper()
	st, body := c.get(t, u)
	if st != http.StatusOK {
		t.Fatalf("GET %s: %d %.300s", u, st, body)
	}
	doc, err := eureka.DecodeApplicationsJSON([]byte(body))
	if err != nil {
		t.Fatalf("GET %s: %v\n%.500s", u, err, body)
	}
	return doc
}

// ids returns a document's instance ids by app, sorted.
func ids(doc *eureka.Applications) map[string][]string {
	out := map[string][]string{}
	for _, a := range doc.Applications {
		for _, i := range a.Instances {
			out[a.Name] = append(out[a.Name], i.ID())
		}
		slices.Sort(out[a.Name])
		if len(out[a.Name]) == 0 {
			delete(out, a.Name)
		}
	}
	return out
}

// merge returns the union of the id maps, per app, sorted.
func merge(ms ...map[string][]string) map[string][]string {
	out := map[string][]string{}
	for _, m := range ms {
		for app, l := range m {
			out[app] = append(out[app], l...)
			slices.Sort(out[app])
		}
	}
	return out
}

// only returns m's apps that are in apps.
func only(m map[string][]string, apps []string) map[string][]string {
	out := map[string][]string{}
	for app, l := range m {
		if slices.Contains(apps, app) {
			out[app] = l
		}
	}
	return out
}

func sameIDs(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for app, l := range a {
		if !slices.Equal(l, b[app]) {
			return false
		}
	}
	return true
}

// holds reports whether p's full registry read with query (a regions
// parameter or "") holds exactly want, with a hash that counts it.
func (c *regionCluster) holds(t *testing.T, p *process, query string, want map[string][]string) bool {
	t.Helper()
	st, body := c.get(t, p.registry+"/eureka/apps"+query)
	if st != http.StatusOK {
		return false
	}
	doc, err := eureka.DecodeApplicationsJSON([]byte(body))
	return err == nil && sameIDs(ids(doc), want) && doc.AppsHashcode == eureka.ReconcileHash(doc.Applications)
}

func (c *regionCluster) snapshot() (us, eu, a3 map[string][]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return merge(c.us), merge(c.eu), merge(c.a3Local)
}

// Reads with regions= merge the remote region's instances into the local
// applications, with a hash over all of them; plain reads hold the local
// region only (the remote instances are never replicated to a peer), and
// A3's whitelist lets only BILLING in.
func (c *regionCluster) unionReads(t *testing.T) {
	us, eu, a3 := c.snapshot()
	for _, p := range []*process{c.a1, c.a2} {
		doc := c.apps(t, p.registry+"/eureka/apps?regions="+euWest)
		if got, want := ids(doc), merge(us, eu); !sameIDs(got, want) {
			t.Errorf("%s regions=eu-west: %v, want %v", p.registry, got, want)
		}
		if doc.AppsHashcode != eureka.ReconcileHash(doc.Applications) || doc.AppsHashcode != "UP_5_" {
			t.Errorf("%s regions=eu-west: apps__hashcode %q, the instances count %q (want UP_5_)", p.registry,
				doc.AppsHashcode, eureka.ReconcileHash(doc.Applications))
		}
		for _, a := range doc.Applications {
			if a.Name == "ORDERS" && len(a.Instances) != 3 {
				t.Errorf("%s: ORDERS is not merged into one application: %d instances", p.registry, len(a.Instances))
			}
		}
		// Upper case, repeats and regions it does not serve change nothing.
		if !c.holds(t, p, "?regions=EU-WEST,eu-west,mars", merge(us, eu)) {
			t.Errorf("%s regions=EU-WEST,eu-west,mars: not the same read", p.registry)
		}
		plain := c.apps(t, p.registry+"/eureka/apps")
		if got := ids(plain); !sameIDs(got, us) || plain.AppsHashcode != "UP_3_" {
			t.Errorf("%s without regions: %v %q, want the local region only %v UP_3_", p.registry, got, plain.AppsHashcode, us)
		}
	}
	for _, p := range []*process{c.b1, c.b2} {
		if !c.holds(t, p, "?regions="+usEast, merge(eu, us)) || !c.holds(t, p, "", eu) {
			t.Errorf("%s: not eu-west with us-east-1 on request, eu-west alone otherwise", p.registry)
		}
	}
	doc := c.apps(t, c.a3.registry+"/eureka/apps?regions="+euWest)
	if got, want := ids(doc), merge(a3, only(eu, c.euWhitelist)); !sameIDs(got, want) || doc.AppsHashcode != eureka.ReconcileHash(doc.Applications) {
		t.Errorf("A3 (whitelist %v) regions=eu-west: %v %q, want %v", c.euWhitelist, got, doc.AppsHashcode, want)
	}
	// The same with one application asked for (apps=, our interest).
	if !c.holds(t, c.a1, "?regions="+euWest+"&apps=ORDERS", only(merge(us, eu), []string{"ORDERS"})) {
		t.Errorf("A1 apps=ORDERS&regions=eu-west: not ORDERS of both regions")
	}
}

// A read that asks for a region not read yet is refused 403, with or
// without others; plain reads are answered; the region, once up, is
// served.
func (c *regionCluster) notReady(t *testing.T) {
	for _, q := range []string{"?regions=ap-south", "?regions=eu-west,ap-south", "/delta?regions=ap-south"} {
		if st, body := c.get(t, c.a3.registry+"/eureka/apps"+q); st != http.StatusForbidden {
			t.Errorf("A3 %s before ap-south is up: %d %.200s, want 403", q, st, body)
		}
	}
	for _, q := range []string{"", "/delta", "?regions=eu-west"} {
		if st, _ := c.get(t, c.a3.registry+"/eureka/apps"+q); st != http.StatusOK {
			t.Errorf("A3 %s: %d, want 200", q, st)
		}
	}
	ap := startProcess(t, c.bin, false, "-addr", c.apSouth, "-region", "ap-south", "-dashboard-path", "off")
	defer ap.stop(t)
	c.register(t, ap, "ap-south", "SEARCH", "search-ap-1", 1)
	c.eventually(t, "A3 to serve ap-south once it answers", func() bool {
		return c.holds(t, c.a3, "?regions=ap-south", map[string][]string{"INVENTORY": {"inventory-a3-1"}, "SEARCH": {"search-ap-1"}})
	})
}

// GET /apps/{app} answers a remote region's copy of an app the local
// region has no instance of, unless -disable-transparent-fallback.
func (c *regionCluster) transparentFallback(t *testing.T) {
	st, body := c.get(t, c.a1.registry+"/eureka/apps/BILLING")
	app, err := eureka.DecodeApplicationJSON([]byte(body))
	if st != http.StatusOK || err != nil || len(app.Instances) != 1 || app.Instances[0].ID() != "billing-eu-1" {
		t.Errorf("A1 GET /apps/BILLING: %d %v %.300s, want eu-west's copy", st, err, body)
	}
	// A local app is answered locally: no remote instance added.
	st, body = c.get(t, c.a1.registry+"/eureka/apps/ORDERS")
	app, err = eureka.DecodeApplicationJSON([]byte(body))
	if st != http.StatusOK || err != nil || len(app.Instances) != 2 {
		t.Errorf("A1 GET /apps/ORDERS: %d %v %.300s, want its two us-east-1 instances", st, err, body)
	}
	// A3 has BILLING in its whitelist, but no fallback.
	if st, body := c.get(t, c.a3.registry+"/eureka/apps/BILLING"); st != http.StatusNotFound {
		t.Errorf("A3 (-disable-transparent-fallback) GET /apps/BILLING: %d %.200s, want 404", st, body)
	}
	if st, _ := c.get(t, c.a1.registry+"/eureka/apps/NOWHERE"); st != http.StatusNotFound {
		t.Errorf("A1 GET /apps/NOWHERE: %d, want 404", st)
	}
}

// A change in eu-west reaches A1's delta with regions= (and not its
// plain delta), with the hash of a full read with regions= at that
// moment; a watch with regions= wakes on it.
func (c *regionCluster) deltaAndWatch(t *testing.T) {
	c.register(t, c.b2, euWest, "SEARCH", "search-eu-1", 1)
	var delta *eureka.Applications
	c.eventually(t, "A1's delta with regions=eu-west to carry eu-west's change", func() bool {
		delta = c.apps(t, c.a1.registry+"/eureka/apps/delta?regions="+euWest)
		return actionOf(delta, "SEARCH", "search-eu-1") == eureka.ActionAdded
	})
	if a := actionOf(c.apps(t, c.a1.registry+"/eureka/apps/delta"), "SEARCH", "search-eu-1"); a != 0 {
		t.Errorf("A1's plain delta carries eu-west's change (%v)", a)
	}
	// The local changes are in it too.
	if actionOf(delta, "ORDERS", "orders-us-1") != eureka.ActionAdded || actionOf(delta, "ORDERS", "orders-eu-1") != eureka.ActionAdded {
		t.Errorf("A1's delta with regions=eu-west lacks a local or an earlier remote registration: %v", ids(delta))
	}
	c.matchingHash(t)

	// Push: a watch with regions= held on A1 returns with eu-west's next
	// change.
	_, _, h := c.getHeader(t, c.a1.registry+"/eureka/apps?regions="+euWest)
	token := h.Get(httpapi.HeaderVersion)
	if strings.Count(token, ".") != 2 {
		t.Fatalf("the version of a read with regions: %q, want <epoch>.<v>.<remote>", token)
	}
	type answer struct {
		status int
		body   string
		at     time.Time
	}
	watched := make(chan answer, 1)
	go func() {
		st, body := c.get(t, c.a1.registry+"/eureka/apps/delta?regions="+euWest+"&wait=8&watch="+url.QueryEscape(token))
		watched <- answer{st, body, time.Now()}
	}()
	time.Sleep(200 * time.Millisecond) // the watch is held: nothing changed since token
	select {
	case a := <-watched:
		t.Fatalf("the watch returned before any change: %d %.300s", a.status, a.body)
	default:
	}
	changed := time.Now()
	c.cancel(t, c.b1, euWest, "SEARCH", "search-eu-1")
	var a answer
	select {
	case a = <-watched:
	case <-time.After(9 * time.Second):
		t.Fatal("the watch with regions=eu-west (wait=8) did not return with eu-west's change")
	}
	doc, err := eureka.DecodeApplicationsJSON([]byte(a.body))
	if a.status != http.StatusOK || err != nil || actionOf(doc, "SEARCH", "search-eu-1") != eureka.ActionDeleted {
		t.Fatalf("the watch answered %d %v %.300s, want eu-west's cancel", a.status, err, a.body)
	}
	t.Logf("a watch on A1 with regions=eu-west returned %v after the cancel on B1", a.at.Sub(changed).Round(time.Millisecond))
	c.matchingHash(t)
}

// matchingHash compares A1's delta with regions=eu-west and a full read
// with regions=eu-west: the same hash, which counts the full read's
// instances. A change between the two reads makes it read again.
func (c *regionCluster) matchingHash(t *testing.T) {
	t.Helper()
	var last string
	for range 5 {
		delta := c.apps(t, c.a1.registry+"/eureka/apps/delta?regions="+euWest)
		full := c.apps(t, c.a1.registry+"/eureka/apps?regions="+euWest)
		if delta.AppsHashcode == full.AppsHashcode && full.AppsHashcode == eureka.ReconcileHash(full.Applications) {
			return
		}
		last = fmt.Sprintf("delta %q, full %q, the full read's instances %q", delta.AppsHashcode, full.AppsHashcode, eureka.ReconcileHash(full.Applications))
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("hashes differ: %s", last)
}

// actionOf returns the action type of app/id in a delta, 0 when absent.
func actionOf(doc *eureka.Applications, app, id string) eureka.ActionType {
	for _, a := range doc.Applications {
		for _, i := range a.Instances {
			if a.Name == app && i.ID() == id {
				return i.ActionType
			}
		}
	}
	return 0
}

// The gateway on A1 sends ORDERS's requests to eu-west once every
// us-east-1 instance of it is cancelled, and back as soon as one
// registers again, without a failed request.
func (c *regionCluster) gatewayFailover(t *testing.T) {
	type result struct {
		sent   time.Time // when the request was sent
		done   time.Time // when its answer was read
		status int
		body   string
		err    error
	}
	var (
		mu      sync.Mutex
		results []result
	)
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	defer tr.CloseIdleConnections()
	gc := &http.Client{Timeout: 5 * time.Second, Transport: tr}
	stopLoad := testkit.Loop(3, func(int) {
		r := result{sent: time.Now()}
		resp, err := gc.Get(c.a1.gateway + "/orders/where")
		if err == nil {
			b, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			r.status, r.body, r.err = resp.StatusCode, string(b), rerr
		} else {
			r.err = err
		}
		r.done = time.Now()
		mu.Lock()
		results = append(results, r)
		mu.Unlock()
	})
	defer stopLoad()
	// count counts the answers sent after since whose body starts with
	// prefix.
	count := func(since time.Time, prefix string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, r := range results {
			if r.sent.After(since) && strings.HasPrefix(r.body, prefix) {
				n++
			}
		}
		return n
	}
	start := time.Now()
	c.eventually(t, "the gateway to route ORDERS to us-east-1", func() bool { return count(start, usEast+" ") >= 20 })

	// Every us-east-1 instance cancelled, on A1 (whose gateway reads its
	// Store: routable on the next request).
	c.cancel(t, c.a1, usEast, "ORDERS", "orders-us-1")
	c.cancel(t, c.a1, usEast, "ORDERS", "orders-us-2")
	cancelled := time.Now()
	c.eventually(t, "the gateway to fail ORDERS over to eu-west", func() bool { return count(cancelled, euWest+" ") >= 100 })
	reregistering := time.Now()
	c.register(t, c.a1, usEast, "ORDERS", "orders-us-1", c.usPort)
	back := time.Now()
	c.eventually(t, "the gateway to route ORDERS to us-east-1 again", func() bool { return count(back, usEast+" ") >= 50 })
	stopLoad()

	var failed []string
	var firstEU time.Time
	toEU, toUS := 0, 0
	for _, r := range results {
		switch {
		case r.err != nil || r.status/100 != 2:
			failed = append(failed, fmt.Sprintf("%d %v %q", r.status, r.err, r.body))
			continue
		case r.body == euWest+" header="+euWest:
			toEU++
			if firstEU.IsZero() || r.sent.Before(firstEU) {
				firstEU = r.sent
			}
		case r.body == usEast+" header=":
			toUS++
		default:
			t.Errorf("an answer neither region's (or with the wrong %s): %q", routing.RegionHeader, r.body)
		}
		// Sent after the last cancel was answered and answered before the
		// registration was sent: eu-west's; sent after the registration
		// was answered: us-east-1's.
		if r.sent.After(cancelled) && r.done.Before(reregistering) && !strings.HasPrefix(r.body, euWest+" ") {
			t.Errorf("a request sent %v after the last cancel went to %q", r.sent.Sub(cancelled), r.body)
		}
		if r.sent.After(back) && !strings.HasPrefix(r.body, usEast+" ") {
			t.Errorf("a request sent %v after the registration went to %q", r.sent.Sub(back), r.body)
		}
	}
	if len(failed) > 0 {
		t.Errorf("%d of %d requests failed during the fail-over, such as %v", len(failed), len(results), failed[:min(len(failed), 5)])
	}
	if firstEU.Before(start) || toEU == 0 {
		t.Errorf("no request went to eu-west after the cancels")
	}
	t.Logf("%d requests: %d to us-east-1, %d to eu-west, none failed: %v", len(results), toUS, toEU, len(failed) == 0)
}

// regionStatus is a remote region in /eureka/status
// (httpapi.RemoteRegionStatus).
type regionStatus struct {
	Name      string `json:"name"`
	Ready     bool   `json:"ready"`
	Dropped   bool   `json:"dropped"`
	Instances int    `json:"instances"`
	LastError string `json:"last_error"`
	Failures  uint64 `json:"failures"`
}

func (c *regionCluster) regionStatus(t *testing.T, p *process, name string) regionStatus {
	t.Helper()
	st, body := c.get(t, p.registry+"/eureka/status")
	var doc struct {
		RemoteRegions []regionStatus `json:"remoteRegions"`
	}
	if st != http.StatusOK || json.Unmarshal([]byte(body), &doc) != nil {
		t.Fatalf("GET /eureka/status: %d %.300s", st, body)
	}
	for _, r := range doc.RemoteRegions {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("GET /eureka/status has no remote region %s: %.500s", name, body)
	return regionStatus{}
}

// Both eu-west nodes killed: A1 (retention 5m, the default) keeps
// serving eu-west's last registry, its status showing the region's last
// error; A3 (retention 3s) drops eu-west's instances after it. Neither
// loses or gains a local instance.
func (c *regionCluster) regionStops(t *testing.T) {
	us, eu, a3 := c.snapshot()
	if !c.holds(t, c.a1, "?regions="+euWest, merge(us, eu)) {
		t.Fatalf("A1 does not hold both regions before eu-west stops")
	}
	for _, p := range []*process{c.b1, c.b2} {
		p.Kill()
	}
	killed := time.Now()
	var st regionStatus
	c.eventually(t, "A1's status to show eu-west's last error", func() bool {
		st = c.regionStatus(t, c.a1, euWest)
		return st.LastError != ""
	})
	t.Logf("A1 saw eu-west fail after %v: %+v", time.Since(killed).Round(time.Millisecond), st)
	if !st.Ready || st.Dropped || st.Instances != countIDs(eu) {
		t.Errorf("A1's eu-west after the failure: %+v, want ready with its %d instances", st, countIDs(eu))
	}
	// A1 keeps serving eu-west's last registry, and its own region whole.
	for range 3 {
		if !c.holds(t, c.a1, "?regions="+euWest, merge(us, eu)) || !c.holds(t, c.a1, "", us) {
			t.Errorf("A1 no longer serves both regions after eu-west stopped answering: %v", ids(c.apps(t, c.a1.registry+"/eureka/apps?regions="+euWest)))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st, body := c.get(t, c.a1.registry+"/eureka/apps/BILLING"); st != http.StatusOK || !strings.Contains(body, "billing-eu-1") {
		t.Errorf("A1's fallback to eu-west's last BILLING: %d %.200s", st, body)
	}
	if r, _ := c.gatewayGet(t, "/orders/where"); !strings.HasPrefix(r, usEast+" ") {
		t.Errorf("the gateway routes ORDERS to %q, want us-east-1", r)
	}

	// A3 drops them after its 3s retention (within a tenth of it more);
	// its whitelist held BILLING only.
	testkit.EventuallyEvery(t, 10*time.Second, 50*time.Millisecond, "A3 to drop eu-west's instances", func() bool {
		st := c.regionStatus(t, c.a3, euWest)
		return st.Dropped && st.Instances == 0
	})
	t.Logf("A3 dropped eu-west %v after it stopped answering", time.Since(killed).Round(time.Millisecond))
	if st := c.regionStatus(t, c.a3, euWest); st.LastError == "" || !st.Ready {
		t.Errorf("A3's eu-west once dropped: %+v, want its last error", st)
	}
	if !c.holds(t, c.a3, "?regions="+euWest, a3) || !c.holds(t, c.a3, "", a3) {
		t.Errorf("A3 with regions=eu-west after the drop: %v, want its own %v", ids(c.apps(t, c.a3.registry+"/eureka/apps?regions="+euWest)), a3)
	}
	delta := c.apps(t, c.a3.registry+"/eureka/apps/delta?regions="+euWest)
	if actionOf(delta, "BILLING", "billing-eu-1") != eureka.ActionDeleted {
		t.Errorf("A3's delta with regions=eu-west does not carry the drop: %v", ids(delta))
	}
	// A1 still holds the whole of both.
	if !c.holds(t, c.a1, "?regions="+euWest, merge(us, eu)) || !c.holds(t, c.a1, "", us) || !c.holds(t, c.a2, "", us) {
		t.Errorf("us-east-1 lost or gained instances after eu-west stopped")
	}
}

// logSummary returns the last n lines of a process's log but the failed
// reads of a remote region, which a stopped region makes every second:
// those are counted, and the last one kept.
func logSummary(log string, n int) string {
	var keep []string
	failed, last := 0, ""
	for _, l := range strings.SplitAfter(log, "\n") {
		if strings.Contains(l, `"msg":"registry watch failed`) || strings.Contains(l, `"msg":"registry fetch failed`) {
			failed++
			last = l
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) > n {
		keep = append([]string{fmt.Sprintf("(%d lines before)\n", len(keep)-n)}, keep[len(keep)-n:]...)
	}
	if failed > 0 {
		keep = append(keep, fmt.Sprintf("(%d failed reads of a remote region, the last:)\n", failed), last)
	}
	return strings.Join(keep, "")
}

func (c *regionCluster) gatewayGet(t *testing.T, path string) (string, int) {
	t.Helper()
	resp, err := c.client.Get(c.a1.gateway + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode
}

func countIDs(m map[string][]string) int {
	n := 0
	for _, l := range m {
		n += len(l)
	}
	return n
}
