package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// sharedRules: ORDERS is limited to 20/s with a burst of 10 per client
// across the gateways, failing open; BILLING to 1/h across them, failing
// closed.
const sharedRules = `apps:
  orders:
    limits: [{key: client, rate: 20/s, burst: 10, shared: true}]
  billing:
    limits: [{key: app, rate: 1/h, burst: 1, shared: true, redis_failure: closed}]
`

// Two gateway processes sharing one Redis limit pass its rate, not
// twice it: over 5 s of a flood from both, 10 + 20/s of the flood's
// time ± 5 % (a correct implementation strays by at most a lease a
// gateway, 1 request each here, and the flood's edges, a request or
// two). Redis killed: the limit failing open passes the traffic, the
// one failing closed answers 503 naming Redis, each gateway logs the
// outage once and counts the failures; redis-server restarted on its
// port, both limit again, without a restart of the gateways.
// /actuator/health shows Redis DOWN meanwhile, its status staying UP.
func TestGatewaysShareARedisLimit(t *testing.T) {
	redis := testkit.StartRedis(t)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(sharedRules), 0o644); err != nil {
		t.Fatal(err)
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer backend.Close()
	port := backend.Listener.Addr().(*net.TCPAddr).Port
	bin := binary(t)
	var gws []*process
	for range 2 {
		p := startProcessFor(t, 2*time.Minute, bin, true, "-addr", "127.0.0.1:0", "-gateway", "127.0.0.1:0", "-gateway-rules", path, "-gateway-redis", redis.URL())
		for _, app := range []string{"ORDERS", "BILLING", "PROBE"} {
			registerAt(t, p.registry, app, port)
		}
		testkit.Eventually(t, 10*time.Second, "the gateway routes", func() bool {
			status, _ := testkit.HTTPGet(t, p.gateway+"/probe/")
			return status == 200
		})
		gws = append(gws, p)
	}

	loads := []*load{startLoad(gws[0].gateway+"/orders/", 4), startLoad(gws[1].gateway+"/orders/", 4)}
	time.Sleep(5 * time.Second) // the flood's length, not a wait for an event
	for _, l := range loads {
		l.stop()
	}
	var first, last time.Time
	passed, each := 0, []int{0, 0}
	for i, l := range loads {
		for _, a := range l.answers {
			if first.IsZero() || a.sent.Before(first) {
				first = a.sent
			}
			if a.received.After(last) {
				last = a.received
			}
			switch a.status {
			case 200:
				passed++
				each[i]++
			case 429:
			default:
				t.Fatalf("an answer %d %q %v, want 200 or 429", a.status, a.body, a.err)
			}
		}
	}
	want := 10 + 20*last.Sub(first).Seconds()
	t.Logf("passed %d (%v by each gateway) of %d in %v, want %.1f ± 5 %%", passed, each, len(loads[0].answers)+len(loads[1].answers), last.Sub(first), want)
	if d := float64(passed) - want; d > 0.05*want || d < -0.05*want || each[0] == 0 || each[1] == 0 {
		t.Errorf("passed %d (%v), want %.1f ± 5 %% from both gateways", passed, each, want)
	}

	redis.Kill()
	gw := gws[0]
	testkit.Eventually(t, 10*time.Second, "the limit failing open passes", func() bool {
		status, _ := testkit.HTTPGet(t, gw.gateway+"/orders/")
		return status == 200
	})
	gw.logs.line(t, "shared rate limits: Redis unreachable")
	testkit.Eventually(t, 10*time.Second, "fail closed answers 503 naming Redis", func() bool {
		status, body := testkit.HTTPGet(t, gw.gateway+"/billing/")
		return status == 503 && strings.Contains(body, "(Redis) unreachable")
	})
	for range 20 { // far past 20/s with a burst of 10, all pass
		if status, _ := testkit.HTTPGet(t, gw.gateway+"/orders/"); status != 200 {
			t.Fatalf("fail open, Redis down: %d, want 200", status)
		}
	}
	_, metrics := testkit.HTTPGet(t, gw.registry+"/metrics")
	if !strings.Contains(metrics, "eureka_gateway_redis_up 0") || strings.Contains(metrics, "eureka_gateway_redis_errors_total 0\n") {
		t.Errorf("/metrics during the outage, no redis_up 0 or no errors counted:\n%s", metrics)
	}

	health := func() (status, redis string) {
		var h struct {
			Status     string
			Components map[string]struct{ Status string }
		}
		_, body := testkit.HTTPGet(t, gw.registry+"/actuator/health")
		if err := json.Unmarshal([]byte(body), &h); err != nil {
			t.Fatalf("/actuator/health: %v: %s", err, body)
		}
		return h.Status, h.Components["redis"].Status
	}
	if status, redis := health(); status != "UP" || redis != "DOWN" {
		t.Errorf("/actuator/health during the outage: %s, redis %s, want UP with redis DOWN", status, redis)
	}

	redis.Start()
	testkit.Eventually(t, 10*time.Second, "limited again once Redis is back", func() bool {
		status, _ := testkit.HTTPGet(t, gw.gateway+"/orders/")
		return status == 429
	})
	testkit.Eventually(t, 10*time.Second, "fail closed passes again once Redis is back", func() bool {
		status, _ := testkit.HTTPGet(t, gw.gateway+"/billing/")
		return status == 200
	})
	gw.logs.line(t, "shared rate limits: Redis reachable again")
	if status, redis := health(); status != "UP" || redis != "UP" {
		t.Errorf("/actuator/health after the outage: %s, redis %s, want UP and UP", status, redis)
	}
	if n := strings.Count(gw.logs.String(), "Redis unreachable"); n != 1 {
		t.Errorf("the outage logged %d times, want once", n)
	}
	if strings.Contains(gw.logs.String(), redis.URL()) {
		t.Error("the log names the Redis URL")
	}
	http.DefaultClient.CloseIdleConnections()
}

// registerAt registers app with one instance on port of 127.0.0.1.
func registerAt(t *testing.T, base, app string, port int) {
	t.Helper()
	body := `{"instance":{"instanceId":"` + app + `-1","hostName":"127.0.0.1","app":"` + app + `","ipAddr":"127.0.0.1","status":"UP","port":{"$":` +
		strconv.Itoa(port) + `,"@enabled":"true"},"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}}}`
	if status, b := testkit.HTTPPost(t, base+"/eureka/apps/"+app, "application/json", body); status != 204 {
		t.Fatalf("register %s: %d %s", app, status, b)
	}
}

// -gateway-redis needs -gateway-rules (the shared limits are the rules
// file's); a URL go-redis cannot read is refused without its password;
// without it, a rules file's shared: true is refused naming it.
func TestGatewayRedisOption(t *testing.T) {
	_, err := parseOptions([]string{"-gateway", "127.0.0.1:0", "-gateway-redis", "redis://127.0.0.1:6379"}, noEnv, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-gateway-redis is set without -gateway-rules") {
		t.Errorf("without -gateway-rules: %v", err)
	}
	o, err := parseOptions([]string{"-gateway", "127.0.0.1:0", "-gateway-rules", "rules.yaml", "-gateway-redis", "mysql://u:s3cret@127.0.0.1:6379"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openRedis(o, zap.NewNop()); err == nil || !strings.HasPrefix(err.Error(), "-gateway-redis: redis URL: ") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a URL of another scheme: %v", err)
	}
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(sharedRules), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary(t), "-addr", "127.0.0.1:0", "-gateway", "127.0.0.1:0", "-gateway-rules", path).CombinedOutput()
	if err == nil || !strings.Contains(string(out), path+":3: apps.orders.limits[0].shared: a shared limit needs the gateway's Redis: cmd/eureka's -gateway-redis") {
		t.Errorf("shared: true without -gateway-redis: %v\n%s", err, out)
	}
}
