package interop

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/eurekagate/eurekagate/caddymodule"
	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// caddyRuns counts the Caddy configs loaded, for unique registry names.
var caddyRuns atomic.Int64

// startCaddyRegistry runs Caddy in this process, admin off, with the
// eureka app's registry served by eureka_server and routed by
// eureka_gateway, each on a loopback port of its own; it returns their
// base URLs. Caddy is process-wide: one config at a time.
func startCaddyRegistry(t *testing.T) (registry, gw string) {
	t.Helper()
	rp, gp := freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1")
	cfg := fmt.Sprintf(`{
	admin off
	persist_config off
	grace_period 1s
	eureka {
		registry interop-%d
		eviction_interval 1s
	}
}
http://127.0.0.1:%d {
	bind 127.0.0.1
	eureka_server
}
http://127.0.0.1:%d {
	bind 127.0.0.1
	eureka_gateway
}
`, caddyRuns.Add(1), rp, gp)
	js, warn, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cfg), nil)
	if err != nil {
		t.Fatalf("adapting the Caddyfile: %v (%v)", err, warn)
	}
	if err := caddy.Load(js, true); err != nil {
		t.Fatalf("loading Caddy: %v", err)
	}
	t.Cleanup(func() { caddy.Stop() })
	return fmt.Sprintf("http://127.0.0.1:%d", rp), fmt.Sprintf("http://127.0.0.1:%d", gp)
}

// registryHost is a server a Spring client registers with and a gateway
// that routes by it: our standalone server with its fasthttp gateway, or
// Caddy with eureka_server and eureka_gateway.
type registryHost struct {
	name       string
	serviceURL string // .../eureka/
	gatewayURL string // http://host:port
}

func hosts() []func(t *testing.T) registryHost {
	return []func(t *testing.T) registryHost{
		func(t *testing.T) registryHost {
			s := startOurServer(t, "our server", "127.0.0.1", true)
			return registryHost{"standalone and its fasthttp gateway", s.serviceURL(), "http://" + s.gateway}
		},
		func(t *testing.T) registryHost {
			reg, gw := startCaddyRegistry(t)
			return registryHost{"Caddy's eureka_server and eureka_gateway", reg + "/eureka/", gw}
		},
	}
}

// A status change made through Spring's /actuator/serviceregistry
// (OUT_OF_SERVICE, then UP) reaches our registry as an override, takes
// the instance out of the gateway's rotation and puts it back; a
// graceful shutdown cancels the registration. On the standalone server
// with its fasthttp gateway, and on Caddy's registry with eureka_gateway.
func TestSpringClientStatusThroughOurGateways(t *testing.T) {
	for _, line := range springLines {
		for i, start := range hosts() {
			t.Run(line.name+"/"+[]string{"standalone", "caddy"}[i], func(t *testing.T) {
				testStatusThroughGateway(t, line.project, start(t))
			})
		}
	}
}

func testStatusThroughGateway(t *testing.T, project string, h registryHost) {
	{
		{
			c := startSpringClientOf(t, project, "orders", "orders-1", h.serviceURL)
			routed := func(want int) func() (bool, string) {
				return func() (bool, string) {
					status, body, err := tryCall("GET", h.gatewayURL+"/orders/hello", nil)
					return err == nil && status == want && (want != 200 || body == "orders-1"), fmt.Sprint(status, " ", body, " ", err)
				}
			}
			eventually(t, 15*time.Second, "routed to the Spring instance", routed(200))

			setStatus := func(status string) {
				code, body := call(t, "POST", c.url("/actuator/serviceregistry"), strings.NewReader(`{"status":"`+status+`"}`), "Content-Type", "application/json")
				if code/100 != 2 {
					t.Fatalf("POST /actuator/serviceregistry %s: %d %s", status, code, body)
				}
			}
			held := func(status, override string) func() (bool, string) {
				return func() (bool, string) {
					got, code := instanceJSON(t, h.serviceURL, "ORDERS", "orders-1")
					return code == 200 && got["status"] == status && got["overriddenStatus"] == override, fmt.Sprint(code, got["status"], got["overriddenStatus"])
				}
			}
			setStatus("OUT_OF_SERVICE")
			eventually(t, 10*time.Second, "OUT_OF_SERVICE in our registry", held("OUT_OF_SERVICE", "OUT_OF_SERVICE"))
			eventually(t, 10*time.Second, "out of the gateway's rotation", routed(503))
			code, body := call(t, "GET", c.url("/actuator/serviceregistry"), nil)
			if code != 200 || !strings.Contains(body, "OUT_OF_SERVICE") {
				t.Errorf("the client's view of its status: %d %s", code, body)
			}
			setStatus("UP")
			eventually(t, 10*time.Second, "UP in our registry", held("UP", "UP"))
			eventually(t, 10*time.Second, "back in the gateway's rotation", routed(200))

			c.stop()
			if c.count(`deregister\s+status: 200`) != 1 {
				t.Errorf("the client did not deregister with 200")
			}
			if _, code := instanceJSON(t, h.serviceURL, "ORDERS", "orders-1"); code != 404 {
				t.Errorf("after a graceful shutdown the instance answers %d, want 404", code)
			}
			eventually(t, 10*time.Second, "no route after the cancel", routed(503))
		}
	}
}

// goService is an instance served by Go and registered through our
// discovery client.
func goService(t *testing.T, serviceURL, app, id string) *discovery.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, id) }))
	t.Cleanup(srv.Close)
	c, err := discovery.New(discovery.Config{
		ServiceURLs:           []string{serviceURL},
		RegistryFetchInterval: time.Second,
		DisableFetch:          true,
		Instance: &discovery.InstanceConfig{
			AppName: app, InstanceID: id, HostName: "127.0.0.1", IPAddr: "127.0.0.1",
			Port: srv.Listener.Addr().(*net.TCPAddr).Port, LeaseRenewalInterval: time.Second,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	testkit.StopOnCleanup(t, 10*time.Second, func(ctx context.Context) {
		c.Stop(ctx)
	})
	return c
}

// The Spring client finds instances registered through our discovery
// client, by its DiscoveryClient (by VIP) and by lb:// calls through
// Spring Cloud LoadBalancer.
func TestSpringClientCallsGoServiceByName(t *testing.T) {
	for _, line := range springLines {
		t.Run(line.name, func(t *testing.T) { testCallByName(t, line.project) })
	}
}

func testCallByName(t *testing.T, project string) {
	srv := startOurServer(t, "our server", "127.0.0.1", false)
	goService(t, srv.serviceURL(), "inventory", "inventory-go-1")
	c := startSpringClientOf(t, project, "orders", "orders-1", srv.serviceURL())
	eventually(t, 15*time.Second, "lb://inventory answered by the Go instance", func() (bool, string) {
		status, body, err := tryCall("GET", c.url("/call/inventory"), nil)
		return err == nil && status == 200 && body == "inventory-go-1", fmt.Sprint(status, " ", body, " ", err)
	})
	// And the other way: the Spring instance as our registry holds it is
	// found by VIP.
	status, body := call(t, "GET", srv.serviceURL()+"vips/orders", nil, "Accept", "application/json")
	if status != 200 || !strings.Contains(body, `"instanceId":"orders-1"`) {
		t.Errorf("GET vips/orders: %d %s", status, body)
	}
}

// Over many delta refreshes while other instances register, change
// status and cancel, the Spring client applies every delta: it never
// logs a reconcile hash mismatch (logged at DEBUG, which the client runs
// at) and never falls back to a full fetch after its first.
func TestSpringClientDeltasMatchOurHash(t *testing.T) {
	for _, line := range springLines {
		t.Run(line.name, func(t *testing.T) { testDeltas(t, line.project) })
	}
}

func testDeltas(t *testing.T, project string) {
	srv := startOurServer(t, "our server", "127.0.0.1", false)
	c := startSpringClientOf(t, project, "orders", "orders-1", srv.serviceURL())
	c.await(`Got delta update with apps hashcode`, 15*time.Second)

	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer backend.Close()
	port := backend.Listener.Addr().(*net.TCPAddr).Port
	register := func(id string) {
		inst := &eureka.InstanceInfo{InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", App: "CHURN", IPAddr: "127.0.0.1",
			VIPAddress: "churn", Status: eureka.StatusUp, Port: eureka.Port{Number: port, Enabled: true},
			DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}}
		if code, body := call(t, "POST", srv.serviceURL()+"apps/CHURN", strings.NewReader(string(eureka.AppendInstanceJSON(nil, inst))),
			"Content-Type", "application/json"); code != 204 {
			t.Fatalf("register %s: %d %s", id, code, body)
		}
	}
	deltasBefore := c.count(`Got delta update with apps hashcode`)
	stop := time.Now().Add(8 * time.Second)
	for i := 0; time.Now().Before(stop); i++ {
		id := fmt.Sprintf("churn-%d", i)
		register(id)
		switch {
		case i%3 == 1:
			call(t, "PUT", srv.serviceURL()+"apps/CHURN/"+id+"/status?value=OUT_OF_SERVICE", nil)
		case i%3 == 2 && i > 2:
			call(t, "DELETE", srv.serviceURL()+"apps/CHURN/"+fmt.Sprintf("churn-%d", i-2), nil)
		}
		time.Sleep(200 * time.Millisecond) // the churn's own pace, not a wait for a condition
	}
	eventually(t, 10*time.Second, "deltas after the churn", func() (bool, string) {
		n := c.count(`Got delta update with apps hashcode`) - deltasBefore
		return n >= 5, fmt.Sprint(n)
	})
	if n := c.count(`Reconcile hashcodes do not match`); n != 0 {
		t.Errorf("the Spring client logged %d reconcile hash mismatches", n)
	}
	// The Java client fetches the whole registry while its copy is empty
	// (before its own registration shows); after its first delta, never.
	if n := countAfter(c.proc, `Got delta update with apps hashcode`, `Getting all instance registry info from the eureka server`); n != 0 {
		t.Errorf("the Spring client fell back to %d full fetches after its first delta", n)
	}
	if n := c.count(`does not allow the delta revision`); n != 0 {
		t.Errorf("the Spring client was refused %d deltas", n)
	}
}

// countAfter counts the lines matching re after the first that matches
// first.
func countAfter(p *proc, first, re string) int {
	rf, rx := regexp.MustCompile(first), regexp.MustCompile(re)
	n, seen := 0, false
	for _, l := range p.Lines() {
		switch {
		case !seen:
			seen = rf.MatchString(l)
		case rx.MatchString(l):
			n++
		}
	}
	return n
}
