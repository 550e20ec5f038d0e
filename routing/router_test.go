package routing

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
)

// apps is an Instancer over fixed lists, UP and all.
type apps struct {
	up, all map[string][]*eureka.InstanceInfo
}

func (a apps) Instances(app string) []*eureka.InstanceInfo    { return a.up[app] }
func (a apps) AllInstances(app string) []*eureka.InstanceInfo { return a.all[app] }

func inst(app, id string, plain, secure bool) *eureka.InstanceInfo {
	return &eureka.InstanceInfo{InstanceID: id, HasInstanceID: true, App: app, HostName: "127.0.0.1", Status: eureka.StatusUp,
		Port: eureka.Port{Number: 8080, Enabled: plain}, SecurePort: eureka.Port{Number: 8443, Enabled: secure}}
}

func newRouter(t testing.TB, cfg Config) *Router {
	t.Helper()
	if cfg.Instances == nil {
		orders := []*eureka.InstanceInfo{inst("ORDERS", "a", true, false), inst("ORDERS", "b", true, true)}
		down := inst("RESTING", "r", true, false)
		down.Status = eureka.StatusDown
		cfg.Instances = apps{
			up: map[string][]*eureka.InstanceInfo{
				"ORDERS": orders,
				"VAULT":  {inst("VAULT", "v", false, true)},
				"SEALED": {inst("SEALED", "s", false, false)},
			},
			all: map[string][]*eureka.InstanceInfo{"ORDERS": orders, "RESTING": {down}},
		}
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Route names the app, the path the instance gets, the port, or the
// answer, the reasons in the client's spelling of the app.
func TestRoute(t *testing.T) {
	r := newRouter(t, Config{})
	for _, c := range []struct {
		target, app, name, path string
		secure                  bool
		status                  int
		reason                  string
	}{
		{target: "/Orders/items/7?x=1", app: "ORDERS", name: "Orders", path: "/items/7?x=1"},
		{target: "/orders", app: "ORDERS", name: "orders", path: "/"},
		{target: "/orders?x=1", app: "ORDERS", name: "orders", path: "/?x=1"},
		{target: "//orders/x", app: "ORDERS", name: "orders", path: "/x"},
		{target: "/admin/../orders/x", app: "ORDERS", name: "orders", path: "/x"},
		{target: "/vault/k", app: "VAULT", name: "vault", path: "/k", secure: true},
		{target: "/NoSuch/x", app: "NOSUCH", name: "NoSuch", path: "/x", status: 503, reason: "no application \"NoSuch\" is registered\n"},
		{target: "/Resting/x", app: "RESTING", name: "Resting", path: "/x", status: 503, reason: "application \"Resting\" has no UP instance\n"},
		{target: "/sealed/x", app: "SEALED", name: "sealed", path: "/x", status: 503, reason: "application \"sealed\" has no instance with an enabled port\n"},
	} {
		var buf [512]byte
		rt, name, path := r.Route(buf[:0], []byte(c.target), nil)
		if rt.Other || rt.App != c.app || string(name) != c.name || string(path) != c.path || rt.Secure != c.secure ||
			rt.Answer.Status != c.status || rt.Answer.Reason != c.reason {
			t.Errorf("%s: %+v name %q path %q", c.target, rt, name, path)
		}
	}
	for _, target := range []string{"/", "/?x=1", "//"} {
		if rt, _, _ := r.Route(nil, []byte(target), nil); !rt.Other {
			t.Errorf("%s names an app: %+v", target, rt)
		}
	}
	// Only the instances that enable the plain port take requests when
	// some do.
	var buf [512]byte
	if rt, _, _ := r.Route(buf[:0], []byte("/orders/x"), nil); len(rt.Instances) != 2 || rt.Secure {
		t.Errorf("orders: %+v", rt)
	}
}

// After a failure the request goes to another instance when it never
// reached the first, or when it may be sent twice; never more than
// Retries times, and never to the instance it failed on while another is
// left.
func TestRetry(t *testing.T) {
	for _, c := range []struct {
		name       string
		retries    int
		resendable bool
		failure    balancer.Failure
		again      bool
	}{
		{"PUT after a timeout", 0, true, balancer.TimedOut, true},
		{"POST after a timeout", 0, false, balancer.TimedOut, false},
		{"POST after a reset", 0, false, balancer.Broken, false},
		{"POST after a refused connection", 0, false, balancer.Refused, true},
		{"retries off", -1, true, balancer.Refused, false},
	} {
		r := newRouter(t, Config{Retries: c.retries})
		var buf [512]byte
		rt, _, _ := r.Route(buf[:0], []byte("/orders/x"), nil)
		try := r.Retry(&rt, c.resendable)
		first := try.Next()
		if got := try.Failed(c.failure); got != c.again {
			t.Errorf("%s: again = %v, want %v", c.name, got, c.again)
			continue
		}
		if !c.again {
			continue
		}
		if second := try.Next(); second == first {
			t.Errorf("%s: retried on the instance that failed", c.name)
		}
		if try.Failed(balancer.Refused) {
			t.Errorf("%s: a second retry with Retries %d", c.name, c.retries)
		}
	}
}

func TestAnswersAndPrefix(t *testing.T) {
	if a := Failed("Orders", balancer.TimedOut); a.Status != 504 || a.Reason != "application \"Orders\": the instance did not answer in time\n" {
		t.Errorf("timeout: %+v", a)
	}
	if a := Failed([]byte("orders"), balancer.Broken); a.Status != 502 || !strings.Contains(a.Reason, "failed to answer") {
		t.Errorf("broken: %+v", a)
	}
	for _, c := range []struct {
		prior   string
		trusted bool
		want    string
	}{
		{"", false, "/orders"},
		{"/evil", false, "/orders"},
		{"/api/", true, "/api/orders"},
		{"", true, "/orders"},
	} {
		if got := string(AppendPrefix(nil, c.prior, c.trusted, "orders")); got != c.want {
			t.Errorf("prefix after %q (trusted %v) = %q, want %q", c.prior, c.trusted, got, c.want)
		}
	}
}

// The decision on the way to an instance allocates nothing: the route,
// the attempts, the pick and the report of the outcome.
func TestRoutingAllocatesNothing(t *testing.T) {
	r := newRouter(t, Config{})
	target := []byte("/orders/items/7?x=1")
	r.Route(nil, target, nil) // the name is cached from the first request on
	n := testing.AllocsPerRun(1000, func() { routeOnce(r, target, nil) })
	if n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}

func routeOnce(r *Router, target []byte, req *Request) *eureka.InstanceInfo {
	var buf [512]byte
	rt, _, _ := r.Route(buf[:0], target, req)
	try := r.Retry(&rt, true)
	inst := try.Next()
	try.Succeeded()
	return inst
}

// BenchmarkRoute is the routing decision of one request: app, path,
// instance; eurekabench gateway measures it inside the gateways.
func BenchmarkRoute(b *testing.B) {
	r := newRouter(b, Config{})
	target := []byte("/orders/items/7?x=1")
	b.ReportAllocs()
	for b.Loop() {
		routeOnce(r, target, nil)
	}
}

// With an instance failing its health check, the request still costs no
// allocation, and the balancer keeps seeing one list: what was filtered is
// kept until the list or the checks change.
func TestRoutingWithAFailingInstanceAllocatesNothing(t *testing.T) {
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer sick.Close()
	a, b := inst("ORDERS", "a", true, false), inst("ORDERS", "b", true, false)
	a.HealthCheckURL = sick.URL + "/health"
	src := apps{up: map[string][]*eureka.InstanceInfo{"ORDERS": {a, b}}}
	checker := balancer.NewChecker(src, balancer.CheckConfig{Interval: 20 * time.Millisecond})
	checker.Start()
	defer checker.Stop()
	r := newRouter(t, Config{Instances: src, Health: checker})
	target := []byte("/orders/x")
	deadline := time.Now().Add(5 * time.Second)
	for {
		if rt, _, _ := r.Route(nil, target, nil); len(rt.Instances) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the failing instance was never filtered out")
		}
		time.Sleep(10 * time.Millisecond)
	}
	first, _, _ := r.Route(nil, target, nil)
	n := testing.AllocsPerRun(1000, func() {
		if inst := routeOnce(r, target, nil); inst != b {
			t.Fatalf("routed to %s, which fails its health check", inst.ID())
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per request", n)
	}
	if again, _, _ := r.Route(nil, target, nil); &again.Instances[0] != &first.Instances[0] {
		t.Error("a new list per request")
	}
}

// Names are cached in one case only, so that a client varying the case
// of its requests cannot make the cache copy itself on each of them.
func TestNameCacheKeepsOneCaseSpellings(t *testing.T) {
	r := newRouter(t, Config{})
	for _, name := range []string{"orders", "ORDERS", "Orders", "oRDERS", "ordERS"} {
		r.Route(nil, []byte("/"+name+"/x"), nil)
	}
	if m := r.names.m.Load(); m == nil || len(*m) != 2 {
		t.Errorf("cached spellings: %v", m)
	}
}
