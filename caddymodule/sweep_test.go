package caddymodule

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/traffic"
)

// 300 instances (100 apps of 3) registered, requested once through
// eureka_gateway and cancelled: within traffic.Grace their series stay on
// the admin endpoint's /metrics; after it, none is left, and the
// dashboard's api/traffic lists none of their apps.
func TestDepartedSeriesDroppedThroughCaddy(t *testing.T) {
	name := newRegistry("departed")
	loadConfig(t, testConfig("", "registry "+name, site(registryPort, "\teureka_server\n\teureka_dashboard"),
		site(gatewayPort, "\teureka_gateway")))
	e, ok := lookupEntry(name)
	if !ok {
		t.Fatalf("registry %s not running", name)
	}
	clock := testkit.NewFakeClock()
	e.clock.Store(clock.Now)
	b := newBackend(t, "b")
	var apps []string
	for a := range 100 {
		app := fmt.Sprintf("GONE-%03d", a)
		apps = append(apps, app)
		for k := range 3 {
			i := b.instance(app)
			i.InstanceID = fmt.Sprintf("%s-%d", app, k)
			testkit.MustRegister(t, e.store, i, false)
		}
	}
	for _, app := range apps {
		for range 3 {
			if status, body := do(t, "GET", gatewayURL+"/"+app+"/x", nil); status != 200 {
				t.Fatalf("/%s/x: %d %q", app, status, body)
			}
		}
	}
	if n := instanceSeries(t); n != 300 {
		t.Fatalf("%d instance series while registered, want 300", n)
	}
	testkit.Eventually(t, 5*time.Second, "api/traffic listing the 100 apps", func() bool { return trafficApps(t) == 100 })

	for _, app := range apps {
		for k := range 3 {
			e.store.Cancel(app, fmt.Sprintf("%s-%d", app, k), false)
		}
	}
	e.sweepTraffic()
	if n := instanceSeries(t); n != 300 {
		t.Fatalf("%d instance series within the grace, want 300", n)
	}
	clock.Advance(traffic.Grace)
	e.sweepTraffic()
	if n := instanceSeries(t); n != 0 {
		t.Fatalf("%d instance series after the grace, want 0", n)
	}
	for _, line := range strings.Split(scrapeAdmin(t), "\n") {
		if strings.HasPrefix(line, "caddy_eureka_gateway_") && strings.Contains(line, `app="GONE-`) {
			t.Fatalf("a departed app's series after the grace: %s", line)
		}
	}
	// The dashboard samples at most once a second.
	testkit.Eventually(t, 5*time.Second, "api/traffic without the departed apps", func() bool { return trafficApps(t) == 0 })
}

// instanceSeries counts eureka_gateway's series with an instance label on
// the admin endpoint's /metrics.
func instanceSeries(t *testing.T) int {
	n := 0
	for _, line := range strings.Split(scrapeAdmin(t), "\n") {
		if strings.HasPrefix(line, "caddy_eureka_gateway_") && strings.Contains(line, `instance="`) {
			n++
		}
	}
	return n
}

// trafficApps returns how many apps the dashboard's api/traffic lists.
func trafficApps(t *testing.T) int {
	status, body := do(t, "GET", "http://127.0.0.1:"+registryPort+"/api/traffic", nil)
	if status != 200 {
		t.Fatalf("api/traffic: %d %.300s", status, body)
	}
	var v struct {
		Apps []json.RawMessage `json:"apps"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	return len(v.Apps)
}
