package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// Mixed clusters: a Spring Cloud Netflix Eureka Server (the java/server
// project) and our cmd/eureka nodes replicating to each other with
// Eureka's peer protocol, each on its own loopback address.
//
// The Java server recognises itself among its peers by host string only
// (spring-cloud.md 5.1), so it runs on 127.0.0.2 and ours on 127.0.0.3 and
// 127.0.0.4: on one address it would take our nodes for itself and drop
// them. It lists the other nodes only, as Spring's peer-aware examples do:
// its embedded client fetches the registry its start-up sync copies from
// the first URL of its list, which must not be itself. Our nodes get the
// same full list with -self-url.
//
// Every wait is a polled condition with a bound; no test sleeps for a
// fixed time where a condition can be read. A watcher samples every node
// for the whole test and fails it on what must never happen: a
// registration a node served going missing, a cancelled instance a node
// stopped serving coming back. The two tests run in parallel (about 50 s
// together on two cores; each starts one JVM).

// mnode is one node of a mixed cluster.
type mnode struct {
	name string
	url  string // service URL, http://ip:port/eureka/
	java bool
	p    *proc
}

func serviceURLOf(ip string, port int) string { return fmt.Sprintf("http://%s:%d/eureka/", ip, port) }

// startJavaNode runs the Spring Cloud Eureka Server on ip:port with peers
// as its defaultZone, and waits until its start-up sync is over ("Started
// Eureka Server", logged after syncUp and openForTraffic, spring-cloud.md
// 5.4 and 6.1).
//
// The timings are shortened through Spring's documented properties
// (spring-cloud.md 3.3):
//   - use-read-only-response-cache=false: reads see a change at once
//     instead of after the 30 s read-only cache refresh, so a read on the
//     Java node can be compared with one on ours;
//   - eviction-interval-timer-in-ms=1000: an expired lease goes within a
//     second (60 s by default), as -eviction-interval 1s on ours;
//   - registry-sync-retry-wait-ms=1000: with register-with-eureka on (the
//     default, so the server also registers itself with its peers) Spring
//     sets registry-sync-retries to 5, and a server whose peers hold nothing
//     would wait 4 x 30 s before "Started Eureka Server"; 4 x 1 s now;
//   - peer-node-connect/read-timeout-ms=2000 (200 ms in Spring): on two
//     shared cores a peer often needs longer to answer a batch, and a
//     timeout is retried as congestion;
//   - enable-self-preservation=false: eviction always runs, so what each
//     node evicts does not depend on how many renews it counted.
//
// hostname and ip-address are the node's own loopback address, which is
// how it recognises itself; instance-id is set so that it does not carry
// the machine's host address.
func startJavaNode(t *testing.T, name, ip string, port int, peers []string, extra ...string) *mnode {
	t.Helper()
	args := []string{
		fmt.Sprintf("--server.port=%d", port),
		"--server.address=" + ip,
		"--spring.application.name=eureka-java",
		"--eureka.instance.hostname=" + ip,
		"--eureka.instance.ip-address=" + ip,
		fmt.Sprintf("--eureka.instance.instance-id=%s:eureka-java:%d", ip, port),
		"--eureka.client.service-url.defaultZone=" + strings.Join(peers, ","),
		"--eureka.server.use-read-only-response-cache=false",
		"--eureka.server.eviction-interval-timer-in-ms=1000",
		"--eureka.server.registry-sync-retry-wait-ms=1000",
		"--eureka.server.peer-node-connect-timeout-ms=2000",
		"--eureka.server.peer-node-read-timeout-ms=2000",
		"--eureka.server.enable-self-preservation=false",
		// "Started Eureka Server"; Registered/Cancelled/evicted instance
		// lines; "Got N instances from neighboring DS node"; the
		// replication tasks' results (WARN) and "Replica node URL".
		"--logging.level.org.springframework.cloud.netflix.eureka.server=INFO",
		"--logging.level.com.netflix.eureka.registry=INFO",
		"--logging.level.com.netflix.eureka.cluster=INFO",
	}
	p := startJava(t, name, "server", append(args, extra...)...)
	p.await(`Started Eureka Server`, 60*time.Second)
	return &mnode{name: name, url: serviceURLOf(ip, port), java: true, p: p}
}

// startOurNode runs cmd/eureka on addr with the whole peer list and
// -self-url, evicting every second without self-preservation (as the Java
// node), and waits until it serves and its start-up sync has decided.
func startOurNode(t *testing.T, name, addr string, peers []string, extra ...string) *mnode {
	t.Helper()
	self := "http://" + addr + "/eureka/"
	args := []string{"-peers", strings.Join(peers, ","), "-self-url", self, "-self-preservation=false"}
	s := startOurServerAt(t, name, addr, append(args, extra...)...)
	s.await(`"start-up sync( done|: no peer has instances|: deadline)`, 40*time.Second)
	return &mnode{name: name, url: self, p: s.proc}
}

// instanceDoc is a registration body as a Java client sends it (the legacy
// codec: "instance" root, port objects, the dataCenterInfo class,
// timestamps as strings).
func instanceDoc(app, id string, port, leaseSecs int, dirty int64) string {
	return fmt.Sprintf(`{"instance":{"instanceId":%q,"hostName":"127.0.0.1","app":%q,"ipAddr":"127.0.0.1",`+
		`"status":"UP","overriddenStatus":"UNKNOWN","port":{"$":%d,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"},`+
		`"countryId":1,"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},`+
		`"leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":%d},"metadata":{"zone":"z1","owner":"interop"},`+
		`"homePageUrl":"http://127.0.0.1:%d/","statusPageUrl":"http://127.0.0.1:%d/actuator/info","healthCheckUrl":"http://127.0.0.1:%d/actuator/health",`+
		`"vipAddress":%q,"secureVipAddress":%q,"isCoordinatingDiscoveryServer":"false","lastUpdatedTimestamp":"%d","lastDirtyTimestamp":"%d"}}`,
		id, strings.ToUpper(app), port, leaseSecs, port, port, port, strings.ToLower(app), strings.ToLower(app), dirty, dirty)
}

// fakeInstance is a client the test drives with plain HTTP calls.
type fakeInstance struct {
	app, id string
	port    int
	lease   int
	mu      sync.Mutex // dirty, which a beatLoop moves
	dirty   int64
}

func (f *fakeInstance) lastDirty() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dirty
}

func newInstance(app, id string, port, lease int) *fakeInstance {
	return &fakeInstance{app: strings.ToUpper(app), id: id, port: port, lease: lease, dirty: time.Now().UnixMilli()}
}

func (f *fakeInstance) key() string { return f.app + "/" + f.id }
func (f *fakeInstance) path(n *mnode) string {
	return n.url + "apps/" + f.app + "/" + f.id
}

func (f *fakeInstance) register(n *mnode) (int, string, error) {
	return tryCall("POST", n.url+"apps/"+f.app, strings.NewReader(instanceDoc(f.app, f.id, f.port, f.lease, f.lastDirty())),
		"Content-Type", "application/json", "Accept", "application/json")
}

// heartbeat is a renew as the Java client sends it: its status and
// lastDirtyTimestamp as query parameters.
func (f *fakeInstance) heartbeat(n *mnode) (int, string, error) {
	return tryCall("PUT", fmt.Sprintf("%s?status=UP&lastDirtyTimestamp=%d", f.path(n), f.lastDirty()), nil, "Accept", "application/json")
}

// reregister is what the Java client does on a heartbeat answered 404:
// mark itself dirty now and register again.
func (f *fakeInstance) reregister(n *mnode) (int, string, error) {
	f.mu.Lock()
	f.dirty = max(time.Now().UnixMilli(), f.dirty+1)
	f.mu.Unlock()
	return f.register(n)
}

func mustCode(t *testing.T, what string, want int, code int, body string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if code != want {
		t.Fatalf("%s: answered %d %q, want %d", what, code, body, want)
	}
}

// getInstance reads one instance from n as generic JSON (numbers kept as
// their text).
func getInstance(n *mnode, app, id string) (map[string]any, int, error) {
	code, body, err := tryCall("GET", n.url+"apps/"+app+"/"+id, nil, "Accept", "application/json")
	if err != nil || code != 200 {
		return nil, code, err
	}
	var doc struct {
		Instance map[string]any `json:"instance"`
	}
	if err := decodeNumbers([]byte(body), &doc); err != nil {
		return nil, code, fmt.Errorf("%v: %s", err, body)
	}
	return doc.Instance, code, nil
}

// field reads a dotted path of a generic JSON object as text ("" when
// absent).
func field(m map[string]any, path string) string {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		if v, ok = mm[k]; !ok {
			return ""
		}
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func fieldInt(m map[string]any, path string) int64 {
	n, _ := strconv.ParseInt(field(m, path), 10, 64)
	return n
}

// registryOf reads n's full registry: each instance's status by
// "APP/id", and the reconcile hash.
func registryOf(n *mnode) (map[string]string, string, error) {
	code, body, err := tryCall("GET", n.url+"apps/", nil, "Accept", "application/json")
	if err != nil {
		return nil, "", err
	}
	if code != 200 {
		return nil, "", fmt.Errorf("GET apps/ answered %d %q", code, body)
	}
	apps, err := eureka.DecodeApplicationsJSON([]byte(body))
	if err != nil {
		return nil, "", fmt.Errorf("%v: %.300s", err, body)
	}
	out := map[string]string{}
	for _, a := range apps.Applications {
		for _, i := range a.Instances {
			app := i.App
			if app == "" {
				app = a.Name
			}
			out[strings.ToUpper(app)+"/"+i.ID()] = i.Status.String()
		}
	}
	return out, apps.AppsHashcode, nil
}

// deltaOf reads n's delta: each instance's actionType by "APP/id".
func deltaOf(n *mnode) (map[string]string, error) {
	code, body, err := tryCall("GET", n.url+"apps/delta", nil, "Accept", "application/json")
	if err != nil {
		return nil, err
	}
	if code != 200 {
		return nil, fmt.Errorf("GET apps/delta answered %d %q", code, body)
	}
	apps, err := eureka.DecodeApplicationsJSON([]byte(body))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, a := range apps.Applications {
		for _, i := range a.Instances {
			out[strings.ToUpper(a.Name)+"/"+i.ID()] = i.ActionType.String()
		}
	}
	return out, nil
}

// onAll polls cond on every node until it holds on all of them.
func onAll(t *testing.T, nodes []*mnode, d time.Duration, what string, cond func(n *mnode) (bool, string)) {
	t.Helper()
	eventually(t, d, what, func() (bool, string) {
		var bad []string
		for _, n := range nodes {
			if ok, got := cond(n); !ok {
				bad = append(bad, n.name+": "+got)
			}
		}
		return len(bad) == 0, strings.Join(bad, "; ")
	})
}

// statusIs is a condition: the instance is served with this status and
// overriddenStatus.
func statusIs(f *fakeInstance, status, overridden string) func(n *mnode) (bool, string) {
	return func(n *mnode) (bool, string) {
		m, code, err := getInstance(n, f.app, f.id)
		if err != nil || code != 200 {
			return false, fmt.Sprintf("GET %d %v", code, err)
		}
		st, ov := field(m, "status"), overriddenOf(m)
		return st == status && ov == overridden, fmt.Sprintf("status %s overriddenStatus %s", st, ov)
	}
}

// overriddenOf is the instance's overridden status, which the codecs
// write as overriddenStatus (and formerly overriddenstatus).
func overriddenOf(m map[string]any) string {
	if v := field(m, "overriddenStatus"); v != "" {
		return v
	}
	return field(m, "overriddenstatus")
}

func gone(f *fakeInstance) func(n *mnode) (bool, string) {
	return func(n *mnode) (bool, string) {
		_, code, err := getInstance(n, f.app, f.id)
		return err == nil && code == 404, fmt.Sprintf("GET %d %v", code, err)
	}
}

// flatten turns a generic JSON object into dotted paths and their text.
func flatten(prefix string, m map[string]any, out map[string]string) {
	for k, v := range m {
		p := strings.TrimPrefix(prefix+"."+k, ".")
		if mm, ok := v.(map[string]any); ok {
			flatten(p, mm, out)
			continue
		}
		out[p] = fmt.Sprint(v)
	}
}

// representationDiffs lists the fields two nodes write differently for
// the same instance, but for the timestamps each server sets itself.
func representationDiffs(a, b map[string]any) []string {
	fa, fb := map[string]string{}, map[string]string{}
	flatten("", a, fa)
	flatten("", b, fb)
	skip := map[string]bool{"lastUpdatedTimestamp": true, "leaseInfo.registrationTimestamp": true,
		"leaseInfo.lastRenewalTimestamp": true, "leaseInfo.serviceUpTimestamp": true, "leaseInfo.evictionTimestamp": true}
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		va, oka := fa[k]
		vb, okb := fb[k]
		if skip[k] || (oka && okb && va == vb) {
			continue
		}
		if !oka {
			va = "(absent)"
		}
		if !okb {
			vb = "(absent)"
		}
		diffs = append(diffs, fmt.Sprintf("%s: %s vs %s", k, va, vb))
	}
	sort.Strings(diffs)
	return diffs
}

// watcher samples every node's full registry a few times a second for the
// whole test (testkit.Watcher) and checks what must never happen: an
// instance that a node served while it was live disappearing from that
// node (a lost registration), and an instance that a node stopped serving
// after its cancel (or eviction) being served by it again (a resurrected
// cancel). The test moves an instance between the phases before it acts.
type watcher struct{ *testkit.Watcher }

func newWatcher(t *testing.T, nodes ...*mnode) *watcher {
	w := &watcher{testkit.NewWatcher(t, 250*time.Millisecond)}
	for _, n := range nodes {
		w.add(n)
	}
	return w
}

// loop is a background goroutine's stop signal and its end: the goroutine
// watches stop and closes done when it returns.
type loop struct {
	stop chan struct{}
	done chan struct{}
}

// newLoop returns a loop neither stopped nor done.
func newLoop() loop { return loop{stop: make(chan struct{}), done: make(chan struct{})} }

// close stops the goroutine, if it is not stopped yet, and waits for it to
// return.
func (l *loop) close() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}

func (w *watcher) add(n *mnode) {
	w.Add(n.name, func(keys []string) (map[string]bool, error) {
		var reg map[string]string
		var err error
		if n.java {
			reg, err = lookups(n, keys)
		} else {
			reg, _, err = registryOf(n)
		}
		out := map[string]bool{}
		for k := range reg {
			out[k] = true
		}
		return out, err
	})
}

func (w *watcher) live(key string)                           { w.Live(key) }
func (w *watcher) ending(key string)                         { w.Ending(key) }
func (w *watcher) forget(key string)                         { w.Forget(key) }
func (w *watcher) goneSince(key string) map[string]time.Time { return w.GoneSince(key) }
func (w *watcher) check(t *testing.T)                        { t.Helper(); w.Check(t) }

// lookups reads the tracked instances from a Java node one by one. Its
// full registry is served from its read-write response cache even with the
// read-only cache off, and a fetch that loads it while a write
// invalidates it can leave the older payload cached (until the next write
// or 180 s): reading it while the test writes would both make it stale
// and misjudge it. Single-instance reads are not cached.
func lookups(n *mnode, keys []string) (map[string]string, error) {
	reg := map[string]string{}
	for _, k := range keys {
		app, id, _ := strings.Cut(k, "/")
		m, code, err := getInstance(n, app, id)
		switch {
		case err != nil:
			return nil, err
		case code == 200:
			reg[k] = field(m, "status")
		case code != 404:
			return nil, fmt.Errorf("GET %s: %d", k, code)
		}
	}
	return reg, nil
}

// awaitFrom waits up to d for a line of p's output after its first skip
// lines to match re.
func awaitFrom(t *testing.T, p *proc, skip int, re string, d time.Duration) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	var m []string
	eventually(t, d, p.Name+" logs "+re, func() (bool, string) {
		lines := p.Lines()
		for _, l := range lines[min(skip, len(lines)):] {
			if m = rx.FindStringSubmatch(l); m != nil {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d lines", len(lines))
	})
	return m
}

func lineCount(p *proc) int { return len(p.Lines()) }

// replay sends n one replicated item as a Java peer's batch would, and
// returns the item's status code.
func replay(t *testing.T, n *mnode, item map[string]any) int {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"replicationList": []any{item}})
	code, resp, err := tryCall("POST", n.url+"peerreplication/batch/", strings.NewReader(string(body)),
		"Content-Type", "application/json", "Accept", "application/json")
	mustCode(t, "replayed batch", 200, code, resp, err)
	var doc struct {
		ResponseList []struct {
			StatusCode int `json:"statusCode"`
		} `json:"responseList"`
	}
	if err := json.Unmarshal([]byte(resp), &doc); err != nil || len(doc.ResponseList) != 1 {
		t.Fatalf("batch answer %q: %v", resp, err)
	}
	t.Logf("replayed %s of %v/%v to %s: %s", item["action"], item["appName"], item["id"], n.name, resp)
	return doc.ResponseList[0].StatusCode
}

// lifecycle makes every write a client makes on origin and checks that
// each reaches every node: registration, heartbeat, status override,
// override removal (then the heartbeat answered 404 and the
// re-registration it causes), cancel.
func lifecycle(t *testing.T, w *watcher, nodes []*mnode, origin *mnode, f *fakeInstance, diffs map[string]bool) {
	t.Helper()
	const d = 15 * time.Second
	began := time.Now()
	w.live(f.key())
	code, body, err := f.register(origin)
	mustCode(t, "register "+f.key()+" on "+origin.name, 204, code, body, err)
	onAll(t, nodes, d, "registration made on "+origin.name, statusIs(f, "UP", "UNKNOWN"))

	// Every node holds the same data; the timestamps each sets itself aside.
	ref, _, _ := getInstance(origin, f.app, f.id)
	for _, n := range nodes {
		if n == origin {
			continue
		}
		m, _, _ := getInstance(n, f.app, f.id)
		for _, k := range []string{"instanceId", "app", "hostName", "ipAddr", "vipAddress", "secureVipAddress",
			"port.$", "port.@enabled", "lastDirtyTimestamp", "leaseInfo.durationInSecs", "leaseInfo.renewalIntervalInSecs",
			"metadata.zone", "metadata.owner", "healthCheckUrl", "dataCenterInfo.name"} {
			if field(m, k) != field(ref, k) {
				t.Errorf("%s on %s = %q, on %s %q", k, n.name, field(m, k), origin.name, field(ref, k))
			}
		}
		for _, diff := range representationDiffs(ref, m) {
			kinds := "ours"
			if origin.java != n.java {
				kinds = "java/ours"
			}
			diffs[kinds+" "+diff] = true
		}
	}

	// A heartbeat moves the lease on every node.
	before := map[string]int64{}
	for _, n := range nodes {
		m, _, _ := getInstance(n, f.app, f.id)
		before[n.name] = fieldInt(m, "leaseInfo.lastRenewalTimestamp")
	}
	beat := time.Now().UnixMilli()
	code, body, err = f.heartbeat(origin)
	mustCode(t, "heartbeat on "+origin.name, 200, code, body, err)
	offsets := map[string]int64{}
	onAll(t, nodes, d, "heartbeat made on "+origin.name, func(n *mnode) (bool, string) {
		m, _, err := getInstance(n, f.app, f.id)
		last := fieldInt(m, "leaseInfo.lastRenewalTimestamp")
		offsets[n.name] = last - beat
		return err == nil && last > before[n.name], fmt.Sprintf("lastRenewalTimestamp %d (before %d) %v", last, before[n.name], err)
	})
	// What lastRenewalTimestamp says after the heartbeat, against when it
	// was made: Eureka writes the renew time plus the lease duration.
	var offs []string
	for _, n := range nodes {
		offs = append(offs, fmt.Sprintf("%s %+.1fs", n.name, float64(offsets[n.name])/1000))
	}
	t.Logf("heartbeat made on %s: lastRenewalTimestamp minus its time (lease %d s): %s", origin.name, f.lease, strings.Join(offs, ", "))

	code, body, err = tryCall("PUT", f.path(origin)+"/status?value=OUT_OF_SERVICE", nil)
	mustCode(t, "status override on "+origin.name, 200, code, body, err)
	onAll(t, nodes, d, "OUT_OF_SERVICE set on "+origin.name, statusIs(f, "OUT_OF_SERVICE", "OUT_OF_SERVICE"))

	// A client's heartbeat keeps the override.
	code, body, err = f.heartbeat(origin)
	mustCode(t, "heartbeat with an override on "+origin.name, 200, code, body, err)

	// The override removed without a value: UNKNOWN everywhere, so that the
	// client's next heartbeat is answered 404 and it registers again.
	code, body, err = tryCall("DELETE", f.path(origin)+"/status", nil)
	mustCode(t, "override removal on "+origin.name, 200, code, body, err)
	onAll(t, nodes, d, "override removed on "+origin.name, statusIs(f, "UNKNOWN", "UNKNOWN"))
	// Whichever node the client heartbeats answers 404.
	for _, n := range nodes {
		code, body, err = f.heartbeat(n)
		mustCode(t, "heartbeat after the override's removal on "+origin.name+", sent to "+n.name, 404, code, body, err)
	}
	code, body, err = f.reregister(origin)
	mustCode(t, "re-registration on "+origin.name, 204, code, body, err)
	onAll(t, nodes, d, "re-registration made on "+origin.name, func(n *mnode) (bool, string) {
		m, _, err := getInstance(n, f.app, f.id)
		ok := field(m, "status") == "UP" && fieldInt(m, "lastDirtyTimestamp") == f.lastDirty()
		return err == nil && ok, fmt.Sprintf("status %s lastDirtyTimestamp %s (want %d) %v", field(m, "status"), field(m, "lastDirtyTimestamp"), f.lastDirty(), err)
	})

	w.ending(f.key())
	code, body, err = tryCall("DELETE", f.path(origin), nil)
	mustCode(t, "cancel on "+origin.name, 200, code, body, err)
	onAll(t, nodes, d, "cancel made on "+origin.name, gone(f))
	t.Logf("lifecycle made on %s reached every node in %v", origin.name, time.Since(began).Round(time.Millisecond))
}

// TestMixedClusterReplication: the Java server starts first and holds
// instances; ours start after it and must copy its whole registry; then
// every client write made on any node must reach every other; each node
// evicts on its own; a cancel raced by the Java node's queued heartbeat
// never comes back, on any node, within or after our delta retention.
func TestMixedClusterReplication(t *testing.T) {
	t.Parallel()
	began := time.Now()
	jPort, o1Port, o2Port := freePort(t, "127.0.0.2"), freePort(t, "127.0.0.3"), freePort(t, "127.0.0.4")
	jURL, o1URL, o2URL := serviceURLOf("127.0.0.2", jPort), serviceURLOf("127.0.0.3", o1Port), serviceURLOf("127.0.0.4", o2Port)
	all := []string{jURL, o1URL, o2URL}

	// The Java server, alone: its peers are not up yet.
	j := startJavaNode(t, "java eureka", "127.0.0.2", jPort, []string{o1URL, o2URL})
	t.Logf("java node up after %v", time.Since(began).Round(time.Millisecond))
	// Its peers were down, so its sync copied nothing; Spring's
	// openForTraffic(0) -> openForTraffic(1) makes it say otherwise.
	t.Logf("java's start-up sync with no peer up: %q", j.p.await(`Got \d+ instances from neighboring DS node`, time.Second)[0])
	w := newWatcher(t, j)

	seeds := []*fakeInstance{newInstance("SEED", "seed-1", 9001, 300), newInstance("SEED", "seed-2", 9002, 300),
		newInstance("BILLING", "billing-1", 9003, 300)}
	for _, f := range seeds {
		w.live(f.key())
		code, body, err := f.register(j)
		mustCode(t, "register "+f.key()+" on java", 204, code, body, err)
	}
	code, body, err := tryCall("PUT", seeds[1].path(j)+"/status?value=OUT_OF_SERVICE", nil)
	mustCode(t, "override on java", 200, code, body, err)
	jReg, _, err := registryOf(j)
	if err != nil || len(jReg) != len(seeds) {
		t.Fatalf("java registry before our nodes start: %v %v", jReg, err)
	}

	// Ours starts after the Java server holds instances: it must copy them
	// all, with their statuses and the override, before it serves reads.
	o1 := startOurNode(t, "ours 1", "127.0.0.3:"+strconv.Itoa(o1Port), all, "-delta-retention", "3s")
	m := o1.p.await(`"start-up sync done","peer":"([^"]+)","instances":(\d+)`, time.Second)
	if m[1] != jURL || m[2] != strconv.Itoa(len(seeds)) {
		t.Errorf("ours 1 synced %s instances from %s, want %d from %s", m[2], m[1], len(seeds), jURL)
	}
	o1Reg, _, err := registryOf(o1)
	if err != nil {
		t.Fatalf("ours 1 after its sync: %v", err)
	}
	for k, st := range jReg {
		if o1Reg[k] != st {
			t.Errorf("ours 1 after its sync: %s is %q, java holds %q", k, o1Reg[k], st)
		}
	}
	if m, _, _ := getInstance(o1, "SEED", "seed-2"); overriddenOf(m) != "OUT_OF_SERVICE" {
		t.Errorf("ours 1 synced seed-2 without its override: %v", m)
	}
	w.add(o1)

	// The second of ours, with Eureka's doubled lease expiry (as the Java
	// node): it syncs from whichever peer answers first.
	o2 := startOurNode(t, "ours 2", "127.0.0.4:"+strconv.Itoa(o2Port), all, "-delta-retention", "3s", "-legacy-lease-expiry")
	w.add(o2)
	t.Logf("ours 2's start-up sync: %s", o2.p.await(`"start-up sync done".*`, time.Second)[0])
	nodes := []*mnode{j, o1, o2}
	for _, f := range seeds {
		onAll(t, nodes, 10*time.Second, "seed "+f.key()+" everywhere", func(n *mnode) (bool, string) {
			_, code, err := getInstance(n, f.app, f.id)
			return code == 200, fmt.Sprint(code, err)
		})
	}
	onAll(t, nodes, 10*time.Second, "seed-2's override everywhere", statusIs(seeds[1], "OUT_OF_SERVICE", "OUT_OF_SERVICE"))
	t.Logf("cluster of three up after %v", time.Since(began).Round(time.Millisecond))

	// Each node evicts by itself, and by its own lease arithmetic: an
	// instance that renewed once and then died.
	evict := newInstance("EVICT", "evict-1", 9004, 4)
	w.live(evict.key())
	code, body, err = evict.register(j)
	mustCode(t, "register evict-1 on java", 204, code, body, err)
	onAll(t, nodes, 10*time.Second, "evict-1 everywhere", statusIs(evict, "UP", "UNKNOWN"))
	w.ending(evict.key())
	code, body, err = evict.heartbeat(j)
	mustCode(t, "evict-1's heartbeat", 200, code, body, err)
	lastBeat := time.Now()

	// The race Eureka loses: the Java node has queued a heartbeat of race-1
	// (it batches for 500 ms) when the instance is cancelled on ours. The
	// Java node applies our cancel, then sends the heartbeat it queued;
	// Eureka would answer 404, and the Java node would register the copy
	// it captured with the heartbeat, bringing the cancelled instance
	// back. Ours must answer 410 and nothing may come back.
	race := newInstance("RACE", "race-1", 9005, 300)
	w.live(race.key())
	code, body, err = race.register(j)
	mustCode(t, "register race-1 on java", 204, code, body, err)
	onAll(t, nodes, 10*time.Second, "race-1 everywhere", statusIs(race, "UP", "UNKNOWN"))
	javaCopy, _, err := getInstance(j, race.app, race.id)
	if err != nil {
		t.Fatal(err)
	}
	w.ending(race.key())
	code, body, err = race.heartbeat(j)
	mustCode(t, "race-1's last heartbeat, on java", 200, code, body, err)
	code, body, err = tryCall("DELETE", race.path(o1), nil)
	mustCode(t, "cancel race-1 on ours 1", 200, code, body, err)
	cancelled := time.Now()
	awaitFrom(t, j.p, 0, `Cancelled instance RACE/race-1 \(replication=true\)`, 10*time.Second)
	line := awaitFrom(t, j.p, 0, `The replication of task RACE/race-1:Heartbeat@(127\.0\.0\.[34]) failed with response code (\d+)`, 10*time.Second)
	t.Logf("java's queued heartbeat of race-1 after the cancel: %q", line[0])
	if line[2] != "410" {
		t.Errorf("ours answered java's stale heartbeat %s, want 410", line[2])
	}
	onAll(t, nodes, 10*time.Second, "race-1 cancelled everywhere", gone(race))

	// What ours answers to the copy the Java node holds, replayed as the
	// Java node would send it: 410 to the registration and the heartbeat.
	item := map[string]any{"appName": race.app, "id": race.id, "lastDirtyTimestamp": race.lastDirty(), "status": "UP",
		"instanceInfo": javaCopy, "action": "Register"}
	if got := replay(t, o1, item); got != 410 {
		t.Errorf("ours 1 answered a replayed registration of the cancelled race-1 %d, want 410", got)
	}
	if got := replay(t, o2, map[string]any{"appName": race.app, "id": race.id, "lastDirtyTimestamp": race.lastDirty(), "status": "UP", "action": "Heartbeat"}); got != 410 {
		t.Errorf("ours 2 answered a replayed heartbeat of the cancelled race-1 %d, want 410", got)
	}

	// Client writes made on each node reach every other.
	diffs := map[string]bool{}
	for n, origin := range nodes {
		lifecycle(t, w, nodes, origin, newInstance("ORDERS", "orders-via-"+strings.ReplaceAll(origin.name, " ", "-"), 9100+n, 300), diffs)
	}
	var list []string
	for d := range diffs {
		list = append(list, d)
	}
	sort.Strings(list)
	if len(list) == 0 {
		list = []string{"none but the timestamps each server sets itself"}
	}
	t.Logf("fields written differently for the same instance: %s", strings.Join(list, "; "))

	// evict-1: ours without the legacy expiry evicts one lease duration
	// after the last renew; the Java node and ours 2 (-legacy-lease-expiry)
	// two. Read from the watcher's samples.
	eventually(t, 20*time.Second, "evict-1 evicted everywhere", func() (bool, string) {
		g := evict.key()
		since := w.goneSince(g)
		return len(since) == 3, fmt.Sprint(since)
	})
	since := w.goneSince(evict.key())
	after := func(n *mnode) time.Duration { return since[n.name].Sub(lastBeat).Round(100 * time.Millisecond) }
	t.Logf("evict-1 (lease 4 s) gone after its last heartbeat: java %v, ours 1 %v, ours 2 (legacy) %v", after(j), after(o1), after(o2))
	if after(o1) > after(j)-time.Second {
		t.Errorf("ours 1 evicted at %v, java at %v: expected ours 1 about one lease duration earlier", after(o1), after(j))
	}
	if after(o2) < 6*time.Second {
		t.Errorf("ours 2 with -legacy-lease-expiry evicted %v after the last renew, want about 2 x 4 s as java", after(o2))
	}

	// After our delta retention (3 s, purged on the next 30 s tick): the
	// cancel has left the delta and the tombstone with it, and still nothing
	// cancelled is served anywhere.
	// Each node purges on a tick of its own: both of ours are waited for,
	// since the replay below goes to ours 2 (ours 1's purge alone once
	// left ours 2's tombstone in place, and the replay got 410).
	for _, n := range []*mnode{o1, o2} {
		eventually(t, 45*time.Second, "race-1's DELETED entry purged from "+n.name+"'s delta", func() (bool, string) {
			d, err := deltaOf(n)
			_, in := d[race.key()]
			return err == nil && !in, fmt.Sprint(d, err)
		})
		t.Logf("race-1's cancel left %s's delta %v after it", n.name, time.Since(cancelled).Round(time.Second))
	}
	for _, n := range nodes {
		reg, _, err := registryOf(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []*fakeInstance{race, evict} {
			if _, ok := reg[f.key()]; ok {
				t.Errorf("%s serves %s after the delta retention", n.name, f.key())
			}
		}
	}

	// Every node ends with the same registry and reconcile hash.
	sameRegistries(t, nodes)
	fullFetchAfterWrites(t, nodes)
	w.check(t)

	// The guard lasts exactly the retention: the replay refused with 410
	// above is now taken (as Eureka's Java server takes it at any time),
	// and the node that took it serves the instance again until it
	// expires. Shown on ours 2, then cleaned up.
	w.forget(race.key())
	got := replay(t, o2, item)
	_, code, _ = getInstance(o2, race.app, race.id)
	t.Logf("after the retention, ours 2 answers the replayed registration of race-1 %d and serves it: GET %d", got, code)
	if got != 200 {
		t.Errorf("after the retention ours 2 answered the replay %d; Eureka answers 200", got)
	}
	tryCall("DELETE", race.path(o2), nil)
	t.Logf("TestMixedClusterReplication took %v", time.Since(began).Round(time.Millisecond))
}

// sameRegistries waits until every node's full registry holds the same
// instances with the same statuses, and the same reconcile hash. The Java
// node's full registry may lag behind its own instance lookups (its
// response cache, see watcher.lookups): a difference that its lookups do
// not show is reported as that, not as a replication failure.
func sameRegistries(t *testing.T, nodes []*mnode) {
	t.Helper()
	var ref *mnode
	for _, n := range nodes {
		if !n.java {
			ref = n
			break
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		want, wantHash, err := registryOf(ref)
		if err != nil {
			t.Fatal(err)
		}
		var bad []string
		for _, n := range nodes {
			reg, hash, err := registryOf(n)
			if err != nil {
				t.Fatal(err)
			}
			if hash != wantHash || fmt.Sprint(reg) != fmt.Sprint(want) {
				bad = append(bad, fmt.Sprintf("%s holds %s %v, %s %s %v", n.name, hash, reg, ref.name, wantHash, want))
			}
		}
		if len(bad) == 0 {
			t.Logf("every node holds the same %d instances, hash %s", len(want), wantHash)
			return
		}
		if time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for _, b := range bad {
			n := nodes[0]
			for _, x := range nodes {
				if strings.HasPrefix(b, x.name+" ") {
					n = x
				}
			}
			if !n.java {
				t.Error(b)
				continue
			}
			agree := true
			for k, st := range want {
				app, id, _ := strings.Cut(k, "/")
				m, code, _ := getInstance(n, app, id)
				agree = agree && code == 200 && field(m, "status") == st
			}
			if !agree {
				t.Error(b)
				continue
			}
			t.Logf("JAVA STALE FULL REGISTRY: its instance lookups agree with %s but GET apps/ does not: %s", ref.name, b)
		}
		return
	}
}

// fullFetchAfterWrites registers instances on each node while other
// clients keep fetching its full registry, and fetches it right after each
// registration was answered 204: the answer must hold it (a client reads
// its own write). Ours build the payload of the registry's version.
// Eureka's read-write response cache can hand out a payload loaded while
// the write invalidated it, so a Java node may answer without the
// registration it has just acknowledged; that is logged, not failed: it is
// the Java server's behaviour, here for comparison.
func fullFetchAfterWrites(t *testing.T, nodes []*mnode) {
	t.Helper()
	const rounds = 20
	for n, origin := range nodes {
		stop := testkit.Loop(3, func(int) { tryCall("GET", origin.url+"apps/", nil, "Accept", "application/json") })
		var made []*fakeInstance
		var stale []string
		for i := range rounds {
			f := newInstance("CACHE", fmt.Sprintf("cache-%d-%d", n, i), 9300+100*n+i, 300)
			code, body, err := f.register(origin)
			if err != nil || code != 204 {
				stop()
				t.Fatalf("register %s on %s: %d %q %v", f.key(), origin.name, code, body, err)
			}
			made = append(made, f)
			if reg, _, err := registryOf(origin); err == nil {
				if _, ok := reg[f.key()]; !ok {
					stale = append(stale, f.id)
				}
			}
		}
		stop()
		switch {
		case len(stale) > 0 && origin.java:
			t.Logf("JAVA STALE FULL REGISTRY: %d of %d full fetches from %s made right after a registration was answered 204 lacked it (%v)",
				len(stale), rounds, origin.name, stale)
		case len(stale) > 0:
			t.Errorf("%d of %d full fetches from %s made right after a registration was answered 204 lacked it (%v)", len(stale), rounds, origin.name, stale)
		default:
			t.Logf("each of %d full fetches from %s held the registration made just before it", rounds, origin.name)
		}
		for _, f := range made {
			tryCall("DELETE", f.path(origin), nil)
		}
	}
}

// cutProxy forwards TCP connections to target until cut: then it closes
// every open connection and each new one, a partition of one direction.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]bool
}

func newCutProxy(t *testing.T, ip, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	return p
}

func (p *cutProxy) url() string { return "http://" + p.ln.Addr().String() + "/eureka/" }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			c.Close()
			continue
		}
		u, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[u] = true, true
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			io.Copy(dst, src)
			dst.Close()
			src.Close()
			p.mu.Lock()
			delete(p.conns, dst)
			delete(p.conns, src)
			p.mu.Unlock()
		}
		go pipe(u, c)
		go pipe(c, u)
	}
}

func (p *cutProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
	}
}

// beatLoop is a live client of one node: a heartbeat every second, and on
// a 404 a re-registration, as the Java client does. It records each
// answer. Not faster: the Java server sends a peer a batch once its
// oldest task is 500 ms old, and a heartbeat replaces the queued one of
// the same instance with a new timestamp, so heartbeats every 500 ms or
// less hold back everything it replicates.
type beatLoop struct {
	f   *fakeInstance
	mu  sync.Mutex
	log []beat
	loop
}

type beat struct {
	at   time.Time
	what string // "heartbeat" or "register"
	code int
}

func (b beat) String() string {
	return fmt.Sprintf("%s %s %d", b.at.Format("15:04:05.000"), b.what, b.code)
}

func startBeatLoop(t *testing.T, f *fakeInstance, n *mnode) *beatLoop {
	b := &beatLoop{f: f, loop: newLoop()}
	go func() {
		defer close(b.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-tick.C:
			}
			at := time.Now()
			code, _, err := f.heartbeat(n)
			if err != nil {
				continue
			}
			b.record(beat{at, "heartbeat", code})
			if code == 404 {
				at = time.Now()
				if code, _, err := f.reregister(n); err == nil {
					b.record(beat{at, "register", code})
				}
			}
		}
	}()
	t.Cleanup(b.close)
	return b
}

func (b *beatLoop) record(x beat) {
	b.mu.Lock()
	b.log = append(b.log, x)
	b.mu.Unlock()
}

// since returns the answers recorded after t0.
func (b *beatLoop) since(t0 time.Time) []beat {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []beat
	for _, x := range b.log {
		if x.at.After(t0) {
			out = append(out, x)
		}
	}
	return out
}

// peerStat is what a node's GET /eureka/status says of its queue to one
// peer.
type peerStat struct {
	URL         string    `json:"url"`
	QueueLength int       `json:"queue_length"`
	Down        bool      `json:"down"`
	LastSuccess time.Time `json:"last_success"`
}

func peerStats(n *mnode, peer string) (peerStat, error) {
	var doc struct {
		Peers []peerStat `json:"peers"`
	}
	code, body, err := tryCall("GET", n.url+"status", nil, "Accept", "application/json")
	if err != nil {
		return peerStat{}, err
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil || code != 200 {
		return peerStat{}, fmt.Errorf("GET status: %d %v %.200s", code, err, body)
	}
	for _, p := range doc.Peers {
		if p.URL == peer {
			return p, nil
		}
	}
	return peerStat{}, fmt.Errorf("no peer %s in %.300s", peer, body)
}

// linesFrom returns p's output lines after its first skip.
func linesFrom(p *proc, skip int) []string {
	lines := p.Lines()
	return lines[min(skip, len(lines)):]
}

// TestMixedClusterJavaSyncsFromOurs: two of ours hold instances (one with
// an override) before the Java server starts: it must end with them all.
// Then the Java node is cut off from ours (ours reach it through a proxy;
// it still reaches ours) while two live clients heartbeat it and their
// instances are cancelled on ours: what each node serves while ours
// remember the cancels, after they forget them, and once the partition
// heals.
//
// It fails, on purpose, on the bug it shows: when the partition heals,
// ours 1 delivers its queued cancel of live-1 although it has since taken
// live-1's newer registration from the Java node, which then drops a live
// instance (see the BUG message).
func TestMixedClusterJavaSyncsFromOurs(t *testing.T) {
	t.Parallel()
	began := time.Now()
	jPort, o1Port, o2Port := freePort(t, "127.0.0.2"), freePort(t, "127.0.0.3"), freePort(t, "127.0.0.4")
	o1URL, o2URL := serviceURLOf("127.0.0.3", o1Port), serviceURLOf("127.0.0.4", o2Port)
	proxy := newCutProxy(t, "127.0.0.5", fmt.Sprintf("127.0.0.2:%d", jPort))
	ours := []string{proxy.url(), o1URL, o2URL} // ours reach the Java node through the proxy

	// The proxy takes the connection and closes it while the Java node is
	// not up: a reset, which the start-up sync asks again until its
	// deadline, then keeps reads refused for the empty-sync wait.
	syncFlags := []string{"-delta-retention", "2s", "-startup-sync-timeout", "2s", "-startup-sync-empty-wait", "2s"}
	o1 := startOurNode(t, "ours 1", "127.0.0.3:"+strconv.Itoa(o1Port), ours, syncFlags...)
	o2 := startOurNode(t, "ours 2", "127.0.0.4:"+strconv.Itoa(o2Port), ours, syncFlags...)
	w := newWatcher(t, o1, o2)
	held := []*fakeInstance{newInstance("STOCK", "stock-1", 9201, 300), newInstance("STOCK", "stock-2", 9202, 300),
		newInstance("PAY", "pay-1", 9203, 300)}
	for n, f := range held {
		w.live(f.key())
		code, body, err := f.register([]*mnode{o1, o2}[n%2])
		mustCode(t, "register "+f.key(), 204, code, body, err)
	}
	code, body, err := tryCall("PUT", held[1].path(o2)+"/status?value=OUT_OF_SERVICE", nil)
	mustCode(t, "override on ours 2", 200, code, body, err)
	onAll(t, []*mnode{o1, o2}, 10*time.Second, "stock-2's override on ours", statusIs(held[1], "OUT_OF_SERVICE", "OUT_OF_SERVICE"))
	for n, f := range held {
		onAll(t, []*mnode{o1, o2}, 10*time.Second, f.key()+" on ours", func(n *mnode) (bool, string) {
			_, code, err := getInstance(n, f.app, f.id)
			return code == 200, fmt.Sprint(code, err)
		})
		startBeatLoop(t, f, []*mnode{o1, o2}[n%2]) // its client heartbeats the node it registered with
	}

	j := startJavaNode(t, "java eureka", "127.0.0.2", jPort, []string{o1URL, o2URL})
	t.Logf("java node up after %v", time.Since(began).Round(time.Millisecond))
	w.add(j)
	// The Java node copies what its embedded client fetched from ours, and
	// that client keeps UP instances only (eureka.client.filter-only-up-
	// instances, true by default): stock-2, OUT_OF_SERVICE, is not in the
	// sync. It reaches the Java node by replication: ours' queued
	// registration if the Java node started within its 30 s, else its
	// client's next heartbeat, which the Java node answers 404 and ours
	// follow with a registration carrying the override.
	m := j.p.await(`Got (\d+) instances from neighboring DS node`, time.Second)
	if m[1] != strconv.Itoa(len(held)-1) {
		t.Errorf("java's start-up sync got %s instances, want the %d UP ones ours hold", m[1], len(held)-1)
	}
	t.Logf("java's start-up sync: %q (ours held %d, one OUT_OF_SERVICE)", m[0], len(held))
	nodes := []*mnode{j, o1, o2}
	for _, f := range held {
		want := "UP"
		if f == held[1] {
			want = "OUT_OF_SERVICE"
		}
		onAll(t, nodes, 10*time.Second, f.key()+" everywhere", func(n *mnode) (bool, string) {
			m, code, err := getInstance(n, f.app, f.id)
			return code == 200 && field(m, "status") == want, fmt.Sprint(code, field(m, "status"), err)
		})
	}
	// The override came with the sync: a heartbeat of the client, which
	// still says UP, leaves it OUT_OF_SERVICE on the Java node.
	code, body, err = held[1].heartbeat(j)
	mustCode(t, "stock-2's heartbeat on java", 200, code, body, err)
	onAll(t, nodes, 5*time.Second, "stock-2 still OUT_OF_SERVICE", statusIs(held[1], "OUT_OF_SERVICE", "OUT_OF_SERVICE"))

	// Two live clients of the Java node: they register and heartbeat there
	// only.
	live1, live2 := newInstance("LIVE", "live-1", 9204, 300), newInstance("LIVE", "live-2", 9205, 300)
	var beats [2]*beatLoop
	for n, f := range []*fakeInstance{live1, live2} {
		code, body, err = f.register(j)
		mustCode(t, "register "+f.key()+" on java", 204, code, body, err)
		beats[n] = startBeatLoop(t, f, j)
		onAll(t, nodes, 10*time.Second, f.key()+" everywhere", statusIs(f, "UP", "UNKNOWN"))
	}

	// Ours lose the Java node; it still reaches ours. Both are cancelled on
	// ours 1 (an operator, or their clients' cancels through another node).
	proxy.setCut(true)
	cutAt := time.Now()
	jLines := lineCount(j.p)
	for _, f := range []*fakeInstance{live1, live2} {
		code, body, err = tryCall("DELETE", f.path(o1), nil)
		mustCode(t, "cancel "+f.key()+" on ours 1", 200, code, body, err)
		onAll(t, []*mnode{o1, o2}, 10*time.Second, f.key()+" cancelled on ours", gone(f))
	}

	// The Java node never heard of the cancels: it keeps serving both,
	// whose heartbeats it keeps taking and replicating; ours answer them
	// 410 while they remember the cancels, so the Java node does not
	// register its copies again (Eureka's peers would answer 404, and the
	// copies would be back on them within a batch).
	line := awaitFrom(t, j.p, jLines, `The replication of task LIVE/live-2:Heartbeat@(127\.0\.0\.[34]) failed with response code (\d+)`, 10*time.Second)
	t.Logf("ours answer java's heartbeats of live-2 while cut off: %q", line[0])
	if line[2] != "410" {
		t.Errorf("ours answered java's heartbeat of live-2 %s, want 410", line[2])
	}
	for _, f := range []*fakeInstance{live1, live2} {
		if _, code, _ := getInstance(j, f.app, f.id); code != 200 {
			t.Errorf("java stopped serving %s while cut off: %d", f.key(), code)
		}
	}

	// live-1's client restarts meanwhile and registers again, on the Java
	// node, with a newer lastDirtyTimestamp: that outranks the cancel, and
	// ours take it from the Java node.
	code, body, err = live1.reregister(j)
	mustCode(t, "live-1 registers again on java", 204, code, body, err)
	onAll(t, nodes, 10*time.Second, "live-1's newer registration everywhere", func(n *mnode) (bool, string) {
		m, _, err := getInstance(n, live1.app, live1.id)
		return err == nil && field(m, "status") == "UP" && fieldInt(m, "lastDirtyTimestamp") == live1.lastDirty(),
			fmt.Sprintf("%s %s (want %d) %v", field(m, "status"), field(m, "lastDirtyTimestamp"), live1.lastDirty(), err)
	})

	// live-2's client goes on with its old data. Once ours forget the
	// cancel (2 s of retention, purged on the next 30 s tick), a heartbeat
	// from the Java node is answered 404, it registers its copy, and ours
	// serve the live client again.
	onAll(t, []*mnode{o1, o2}, 45*time.Second, "live-2 back on ours after the retention", statusIs(live2, "UP", "UNKNOWN"))
	t.Logf("live-2, heartbeating java all along, was not served by ours for about %v", time.Since(cutAt).Round(time.Second))
	awaitFrom(t, j.p, jLines, `cannot find instance id live-2 and hence replicating the instance with status UP`, time.Second)
	for n, b := range beats {
		for _, x := range b.since(cutAt) {
			if x.code != 200 && x.code != 204 {
				t.Errorf("live-%d's client got %v from java during the partition", n+1, x)
			}
		}
	}

	// The partition heals. Ours 1 still has both cancels queued for the
	// Java node (a cancel waits up to 3 minutes, however short
	// -delta-retention is). Wait until its queue to the Java node is
	// delivered.
	healed := time.Now()
	hLines := lineCount(j.p)
	proxy.setCut(false)
	eventually(t, 15*time.Second, "ours 1's queue to java delivered after the partition", func() (bool, string) {
		st, err := peerStats(o1, proxy.url())
		return err == nil && !st.Down && st.QueueLength == 0 && st.LastSuccess.After(healed), fmt.Sprintf("%+v %v", st, err)
	})
	// Whatever was dropped, the live clients register again: every node
	// ends with both.
	for _, f := range []*fakeInstance{live1, live2} {
		onAll(t, nodes, 10*time.Second, f.key()+" everywhere in the end", func(n *mnode) (bool, string) {
			m, _, err := getInstance(n, f.app, f.id)
			return err == nil && field(m, "status") == "UP" && fieldInt(m, "lastDirtyTimestamp") >= f.lastDirty(),
				fmt.Sprintf("%s %s %v", field(m, "status"), field(m, "lastDirtyTimestamp"), err)
		})
	}
	javaSaid := func(id string) []string {
		var out []string
		for _, l := range linesFrom(j.p, hLines) {
			if strings.Contains(l, "LIVE/"+id+" ") || strings.Contains(l, "LIVE - "+id) {
				out = append(out, strings.TrimSpace(l[strings.LastIndex(l, " : ")+3:]))
			}
		}
		return out
	}
	// What must never happen: a cancel older than a registration the
	// sender has since taken reaching a peer, which then drops the live
	// instance. (An all-Java cluster has the same flaw for as long as
	// Eureka keeps a cancel task, maxTimeForReplication, 30 s; ours keep it
	// 3 minutes.)
	if j.p.count(`Cancelled instance LIVE/live-1 \(replication=true\)`) > 0 {
		t.Errorf("BUG: after the partition healed, ours 1 delivered its queued cancel of live-1 (made %v before) to java although it "+
			"had since taken live-1's newer registration (lastDirtyTimestamp above the cancelled one's) from java itself; java "+
			"dropped the live instance every node of ours serves, until its client's next heartbeat was answered 404 and it "+
			"registered again. Java said: %q; the client saw: %v",
			healed.Sub(cutAt).Round(time.Second), javaSaid("live-1"), beats[0].since(healed))
	}
	// live-2's cancel is as old as the copy ours took back after the
	// retention; it is delivered too, because a queued cancel outlives a
	// -delta-retention shorter than 3 minutes.
	if j.p.count(`Cancelled instance LIVE/live-2 \(replication=true\)`) > 0 {
		t.Logf("after the partition healed java got ours 1's cancel of live-2 (made %v before, past ours' 2 s retention, after ours "+
			"had taken java's copy back) and dropped it. Java said: %q; the client saw: %v",
			healed.Sub(cutAt).Round(time.Second), javaSaid("live-2"), beats[1].since(healed))
	}
	w.check(t)
	t.Logf("TestMixedClusterJavaSyncsFromOurs took %v", time.Since(began).Round(time.Millisecond))
}
