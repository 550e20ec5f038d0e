package caddymodule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// Two eureka_gateway handlers of one Caddy share a limit with shared:
// true through the eureka app's redis: one burst of 10 for both, not
// one each (each may pass one request more than Redis granted it, on
// credit while it asks: 10 to 12 in all, where limits of their own would
// pass 20 or more). Without redis, shared: true fails the config naming
// the option.
func TestGatewaysShareTheAppsRedis(t *testing.T) {
	redis := testkit.StartRedis(t)
	name := newRegistry("redis-shared")
	rules := rulesHeredoc("apps:\n  ORDERS:\n    limits: [{key: app, rate: 1/h, burst: 10, shared: true}]\n  BILLING:\n    limits: [{key: app, rate: 1/h, burst: 1, shared: true}]")
	gw := "eureka_gateway {\n\t\t" + rules + "\n\t}"
	cfg := testConfig("", "registry "+name+"\n\t\tredis "+redis.URL(),
		site(registryPort, "\thandle_path /gw/* {\n\t"+gw+"\n\t}\n\teureka_actuator\n\teureka_server"),
		site(gatewayPort, "\t"+gw))
	loadConfig(t, cfg)
	registerVia(t, registryURL, versionBackend(t, "orders", "2.0"))
	registerVia(t, registryURL, versionBackend(t, "billing", "2.0"))
	passed, sent := 0, 0
	send := func() {
		url := []string{gatewayURL, "http://127.0.0.1:" + registryPort + "/gw"}[sent%2] + "/orders/x"
		sent++
		switch status, body := get(t, url); status {
		case 200:
			passed++
		case 429:
		default:
			t.Fatalf("%s: %d %q", url, status, body)
		}
	}
	// A request past a gateway's credit is refused until Redis answers
	// its refill: send until the burst has passed, then as many again.
	testkit.Eventually(t, 10*time.Second, "the shared burst passed", func() bool {
		send()
		return passed >= 10
	})
	for range sent {
		send()
	}
	if passed > 12 {
		t.Errorf("%d of %d passed through both gateways, want the shared burst of 10 (up to 12)", passed, sent)
	}

	// Redis killed: a limit that asks Redis (ORDERS' keys were refused
	// for the hour Redis named, and ask nothing) finds it gone and fails
	// open; eureka_actuator's health shows redis DOWN and stays UP;
	// Redis back, redis is UP again.
	health := func() (status, redis string) {
		var h struct {
			Status     string
			Components map[string]struct{ Status string }
		}
		_, body := get(t, "http://127.0.0.1:"+registryPort+"/actuator/health")
		json.Unmarshal([]byte(body), &h)
		return h.Status, h.Components["redis"].Status
	}
	if status, r := health(); status != "UP" || r != "UP" {
		t.Errorf("health with Redis up: %s, redis %s", status, r)
	}
	redis.Kill()
	testkit.Eventually(t, 10*time.Second, "the limit failing open passes", func() bool {
		status, _ := get(t, gatewayURL+"/billing/x")
		_, r := health()
		return status == 200 && r == "DOWN"
	})
	for range 3 { // a burst of 1 an hour, passed: the limit fails open
		if status, body := get(t, gatewayURL+"/billing/x"); status != 200 {
			t.Fatalf("fail open, Redis down: %d %q", status, body)
		}
	}
	if status, _ := health(); status != "UP" {
		t.Errorf("health with Redis down: %s, want UP (redis DOWN)", status)
	}
	redis.Start()
	testkit.Eventually(t, 10*time.Second, "redis UP in health again", func() bool {
		_, r := health()
		return r == "UP"
	})

	adapted, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(testConfig("", "registry "+newRegistry("redis-none"), site(gatewayPort, "\t"+gw))), nil)
	if err != nil {
		t.Fatal(err)
	}
	var c caddy.Config
	if err := json.Unmarshal(adapted, &c); err != nil {
		t.Fatal(err)
	}
	err = caddy.Validate(&c)
	if err == nil || !strings.Contains(err.Error(), "shared: a shared limit needs the gateway's Redis") || !strings.Contains(err.Error(), "Caddy's redis in the eureka app") {
		t.Errorf("shared: true without redis: %v", err)
	}
}
