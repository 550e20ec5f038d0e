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
	rules := rulesHeredoc("apps:\n  ORDERS:\n    limits: [{key: app, rate: 1/h, burst: 10, shared: true}]")
	gw := "eureka_gateway {\n\t\t" + rules + "\n\t}"
	cfg := testConfig("", "registry "+name+"\n\t\tredis "+redis.URL(),
		site(registryPort, "\thandle_path /gw/* {\n\t"+gw+"\n\t}\n\teureka_server"),
		site(gatewayPort, "\t"+gw))
	loadConfig(t, cfg)
	registerVia(t, registryURL, versionBackend(t, "orders", "2.0"))
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
