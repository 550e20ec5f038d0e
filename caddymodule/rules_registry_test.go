package caddymodule

import (
	"encoding/json"
	"testing"

	"github.com/eurekagate/eurekagate/dashboard"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
)

func rulesRouter(t *testing.T, doc string) *routing.Router {
	t.Helper()
	var rules *routing.Rules
	if doc != "" {
		var err error
		if rules, err = routing.ParseRules("test rules", []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := routing.New(routing.Config{Instances: noInstances{}, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type noInstances struct{}

func (noInstances) Instances(string) []*eureka.InstanceInfo { return nil }

// rulesOf gives the rules of the router registered last that has rules,
// per registry entry; unregistering brings back the one before, and a
// router's own change of rules shows.
func TestRulesRegistry(t *testing.T) {
	e1, e2 := new(entry), new(entry)
	old := rulesRouter(t, "apps:\n  orders:\n    default: {version: \"1\"}\n")
	next := rulesRouter(t, "apps:\n  orders:\n    default: {version: \"2\"}\n")
	none := rulesRouter(t, "")
	other := rulesRouter(t, "apps:\n  payments:\n    default: {zone: east}\n")
	t.Cleanup(func() {
		for _, r := range []*routing.Router{old, next, none, other} {
			unregister(r)
		}
	})
	label := func(e *entry) string {
		rules := rulesOf(e)
		if rules == nil {
			return "none"
		}
		app := rules.Apps()[0]
		return app + " " + rules.Subsets(app)[0].Label()
	}
	if got := label(e1); got != "none" {
		t.Fatalf("before any gateway: %s", got)
	}
	register(e1, old)
	register(e2, other)
	register(e1, next) // a reload: the new config's gateway comes in
	register(e1, none) // a gateway without rules hides nothing
	register(nil, old)
	register(e1, nil)
	if got := label(e1); got != "ORDERS version=2" {
		t.Errorf("after the reload: %s", got)
	}
	if got := label(e2); got != "PAYMENTS zone=east" {
		t.Errorf("the other registry: %s", got)
	}
	unregister(next)
	if got := label(e1); got != "ORDERS version=1" {
		t.Errorf("the newer gateway gone: %s", got)
	}
	old.SetRules(nil)
	if got := label(e1); got != "none" {
		t.Errorf("rules dropped by the router: %s", got)
	}
	unregister(old)
	unregister(none)
	unregister(nil)
	gatewayRouters.mu.Lock()
	_, kept := gatewayRouters.byEntry[e1]
	gatewayRouters.mu.Unlock()
	if kept {
		t.Error("an entry without routers is kept")
	}
}

// eureka_dashboard shows the rules of the routers registered for its
// registry, read at each request.
func TestDashboardShowsGatewayRules(t *testing.T) {
	name := newRegistry("dashboard-rules")
	loadConfig(t, testConfig("", "registry "+name, site(registryPort, "\teureka_server\n\teureka_dashboard")))
	e, ok := lookupEntry(name)
	if !ok {
		t.Fatalf("registry %s not running", name)
	}
	for _, v := range []string{"2.0", "2.1"} {
		i := newBackend(t, "orders-"+v).instance("orders")
		i.Metadata = map[string]string{"version": v}
		registerVia(t, registryURL, i)
	}
	read := func() dashboard.RulesView {
		t.Helper()
		status, body := do(t, "GET", "http://127.0.0.1:"+registryPort+"/api/rules", nil)
		var v dashboard.RulesView
		if err := json.Unmarshal([]byte(body), &v); status != 200 || err != nil {
			t.Fatalf("api/rules: %d %v %s", status, err, body)
		}
		return v
	}
	if v := read(); !v.Configured || len(v.Apps) != 0 {
		t.Fatalf("without a gateway: %+v", v)
	}

	r := rulesRouter(t, `apps:
  orders:
    default: {version: "2.0"}
    rules:
      - match: {header: {X-Canary: "1"}}
        to: [{select: {version: "2.1"}}]
`)
	register(e, r)
	t.Cleanup(func() { unregister(r) })
	v := read()
	if len(v.Apps) != 1 || v.Source != "test rules" || v.Apps[0].App != "ORDERS" || len(v.Apps[0].Subsets) != 2 {
		t.Fatalf("with a gateway's rules: %+v", v)
	}
	for n, want := range []string{"orders-2.0", "orders-2.1"} {
		if s := v.Apps[0].Subsets[n]; s.Count != 1 || s.Instances[0].ID != want {
			t.Errorf("subset %s: %+v, want %s", s.Label, s, want)
		}
	}
	unregister(r)
	if v := read(); len(v.Apps) != 0 {
		t.Errorf("the gateway gone: %+v", v)
	}
}
