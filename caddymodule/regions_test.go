package caddymodule

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/eurekagate/eurekagate/internal/registrytest"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// The remote regions' options adapt into the eureka app's JSON: regions
// from the option's line and its block, a region that comes again adding
// URLs; whitelists per region and global; and eureka_gateway's
// failover_regions.
func TestRegionsCaddyfile(t *testing.T) {
	a, out := adaptApp(t, `{
	eureka {
		region us-east-1
		remote_regions EU-West-1 http://eu-1:8761/eureka/ {
			ap-south-1 https://ap:8761/eureka/
			eu-west-1 http://eu-2:8761/eureka/
		}
		remote_region_apps eu-west-1 ORDERS USERS
		remote_region_apps global BILLING
		remote_region_apps eu-west-1 CART
		remote_region_fetch_interval 10s
		remote_region_retention 2m
		remote_region_max_bytes 1MiB
		remote_region_max_instances 5000
		disable_transparent_fallback
	}
}
http://:8080 {
	eureka_gateway {
		failover_regions eu-west-1 ap-south-1
	}
}
`)
	want := []RemoteRegion{
		{Name: "eu-west-1", URLs: []string{"http://eu-1:8761/eureka/", "http://eu-2:8761/eureka/"}},
		{Name: "ap-south-1", URLs: []string{"https://ap:8761/eureka/"}},
	}
	if !reflect.DeepEqual(a.RemoteRegions, want) {
		t.Errorf("remote_regions %+v, want %+v", a.RemoteRegions, want)
	}
	if apps := a.RemoteRegionApps; !reflect.DeepEqual(apps, map[string][]string{"eu-west-1": {"ORDERS", "USERS", "CART"}, "global": {"BILLING"}}) {
		t.Errorf("remote_region_apps %v", apps)
	}
	if a.Region != "us-east-1" || a.RemoteRegionFetchInterval != caddy.Duration(10*time.Second) ||
		a.RemoteRegionRetention != caddy.Duration(2*time.Minute) || !a.DisableTransparentFallback ||
		a.RemoteRegionMaxBytes != 1<<20 || a.RemoteRegionMaxInstances != 5000 {
		t.Errorf("app %s", a.options())
	}
	st := a.settings().store
	if st.Region != "us-east-1" || !st.DisableTransparentFallback || st.RemoteRegionRetention != 2*time.Minute ||
		!reflect.DeepEqual(st.RemoteRegionAppWhitelist, []string{"BILLING"}) ||
		!reflect.DeepEqual(st.RemoteRegions, []registry.RemoteRegion{{Name: "eu-west-1", AppWhitelist: []string{"ORDERS", "USERS", "CART"}}, {Name: "ap-south-1"}}) {
		t.Errorf("the Store's config: %+v", st)
	}
	var doc any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var failover []string
	eachHandler(doc, "eureka_gateway", func(h map[string]any) {
		for _, r := range h["failover_regions"].([]any) {
			failover = append(failover, r.(string))
		}
	})
	if !reflect.DeepEqual(failover, []string{"eu-west-1", "ap-south-1"}) {
		t.Errorf("failover_regions %v in\n%s", failover, out)
	}
	if rc, err := (&Gateway{FailoverRegions: failover}).routerConfig(); err != nil || !reflect.DeepEqual(rc.FailoverRegions, failover) {
		t.Errorf("the router's FailoverRegions: %v, %v", rc.FailoverRegions, err)
	}
}

func TestRegionsCaddyfileErrors(t *testing.T) {
	expectCaddyfileErrors(t, []caddyfileError{
		{"region without URL", withEurekaOptions("\t\tremote_regions eu-west-1\n"),
			[]string{"remote_regions takes a region and its service URLs", "Caddyfile:3"}},
		{"region without URL in a block", withEurekaOptions("\t\tremote_regions {\n\t\t\teu-west-1\n\t\t}\n"),
			[]string{"remote_regions takes a region and its service URLs", `"eu-west-1"`, "Caddyfile:4"}},
		{"empty remote_regions", withEurekaOptions("\t\tremote_regions\n"),
			[]string{"remote_regions needs a region and its service URLs", "Caddyfile:3"}},
		{"bad URL", withEurekaOptions("\t\tremote_regions eu-west-1 eu:8761\n"),
			[]string{"remote_regions eu-west-1", `"eu:8761"`, "http://host:8761/eureka/", "Caddyfile:3"}},
		{"own region", withEurekaOptions("\t\tregion eu-west-1\n\t\tremote_regions eu-west-1 http://eu:8761/eureka/\n"),
			[]string{"eu-west-1 is this registry's own region", "Caddyfile:4"}},
		{"default own region", withEurekaOptions("\t\tremote_regions us-east-1 http://us:8761/eureka/\n"),
			[]string{"us-east-1 is this registry's own region", "Caddyfile:3"}},
		{"apps of an unknown region", withEurekaOptions("\t\tremote_regions eu-west-1 http://eu:8761/eureka/\n\t\tremote_region_apps ap-south-1 ORDERS\n"),
			[]string{"remote_region_apps: ap-south-1 is not one of remote_regions (eu-west-1) or global", "Caddyfile:4"}},
		{"apps without apps", withEurekaOptions("\t\tremote_region_apps global\n"),
			[]string{"remote_region_apps takes a remote region (or global) and its apps", "Caddyfile:3"}},
		{"zero fetch interval", withEurekaOptions("\t\tremote_region_fetch_interval 0s\n"),
			[]string{"remote_region_fetch_interval 0s", "default, 30s", "Caddyfile:3"}},
		{"negative retention", withEurekaOptions("\t\tremote_region_retention -1m\n"),
			[]string{"remote_region_retention -1m", "default, 5m", "Caddyfile:3"}},
		{"zero max instances", withEurekaOptions("\t\tremote_region_max_instances 0\n"),
			[]string{"remote_region_max_instances 0 must be above 0; leave it out for the default, 1000000", "Caddyfile:3"}},
		{"max bytes not a size", withEurekaOptions("\t\tremote_region_max_bytes lots\n"),
			[]string{`remote_region_max_bytes "lots" is not a size`, "Caddyfile:3"}},
		{"max bytes without regions", withEurekaOptions("\t\tremote_region_max_bytes 1MiB\n"),
			[]string{"remote_region_max_bytes applies to remote regions and would be ignored without remote_regions"}},
		{"with remote", withEurekaOptions("\t\tremote http://e:8761/eureka/\n\t\tremote_regions eu-west-1 http://eu:8761/eureka/\n"),
			[]string{"remote_regions applies to a hosted registry", "Caddyfile:4"}},
		{"fallback with remote", withEurekaOptions("\t\tdisable_transparent_fallback\n\t\tremote http://e:8761/eureka/\n"),
			[]string{"disable_transparent_fallback applies to a hosted registry", "Caddyfile:3"}},
		{"gateway failover_regions empty", "http://:1 {\n\teureka_gateway {\n\t\tfailover_regions\n\t}\n}\n",
			[]string{"failover_regions needs the remote regions", "Caddyfile:3"}},
	})
}

func TestRegionsJSONErrors(t *testing.T) {
	expectAppErrors(t, []appError{
		{`{"registry":"rj-1","remote_regions":[{"name":"eu-west-1"}]}`, []string{"remote_regions: eu-west-1 needs at least one service URL"}},
		{`{"registry":"rj-2","remote_regions":[{"urls":["http://eu:8761/eureka/"]}]}`, []string{"remote_regions: a region without a name"}},
		{`{"registry":"rj-3","remote_regions":[{"name":"eu-west-1","urls":["http://eu/eureka/"]},{"name":"EU-WEST-1","urls":["http://eu2/eureka/"]}]}`,
			[]string{"remote_regions: EU-WEST-1 is listed twice"}},
		{`{"registry":"rj-4","remote_regions":[{"name":"global","urls":["http://eu/eureka/"]}]}`, []string{"global is not a region's name"}},
		{`{"registry":"rj-5","remote_regions":[{"name":"eu","urls":["ftp://eu/eureka/"]}]}`, []string{"remote_regions eu", `"ftp://eu/eureka/"`}},
		{`{"registry":"rj-6","remote_region_apps":{"eu":["A"]}}`, []string{"remote_region_apps: eu is not one of remote_regions () or global"}},
		{`{"registry":"rj-7","remote_regions":[{"name":"eu","urls":["http://eu/eureka/"]}],"remote_region_apps":{"eu":[]}}`, []string{"eu lists no app"}},
		{`{"registry":"rj-8","remote_region_retention":-1}`, []string{"remote_region_retention", "default, 5m"}},
		{`{"registry":"rj-9","remote_regions":[{"name":"eu","urls":["http://eu/eureka/"]}],"remote_region_max_instances":-1}`,
			[]string{"remote_region_max_instances -1 must be above 0; leave it out for the default, 1000000"}},
		{`{"remote":["http://e:8761/eureka/"],"region":"eu"}`, []string{"region applies to a hosted registry"}},
	})
}

// A reload that changes a running registry's remote regions or their
// whitelists is refused, naming them: they are the registry's settings.
// Their service URLs and fetch interval belong to each config.
func TestChangedRemoteRegionsNamed(t *testing.T) {
	name := newRegistry("changed-regions")
	eu := func(url string) []RemoteRegion { return []RemoteRegion{{Name: "eu-west-1", URLs: []string{url}}} }
	running := &App{Registry: name, RemoteRegions: eu("http://eu-1:8761/eureka/")}
	if err := provisionApp(t, running); err != nil {
		t.Fatal(err)
	}
	defer running.Cleanup()
	moved := &App{Registry: name, RemoteRegions: eu("http://eu-2:8761/eureka/"), RemoteRegionFetchInterval: caddy.Duration(time.Second)}
	if err := provisionApp(t, moved); err != nil {
		t.Fatalf("new URLs for the same region refused: %v", err)
	}
	moved.Cleanup()
	changed := &App{Registry: name, RemoteRegions: []RemoteRegion{{Name: "ap-south-1", URLs: []string{"http://ap:8761/eureka/"}}},
		RemoteRegionApps: map[string][]string{"global": {"A"}}}
	err := provisionApp(t, changed)
	if err == nil {
		changed.Cleanup()
		t.Fatal("changed remote regions accepted")
	}
	for _, want := range []string{
		"remote_regions (running: eu-west-1, new: ap-south-1)",
		"remote_region_apps (running: default, new: global A)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

// The hosted registry reads its remote region while the config runs: a
// read with regions= through eureka_server has the region's instances, a
// change there arrives through the watch, and eureka_gateway with
// failover_regions routes to the region's instance while the local
// region has none.
func TestRemoteRegionThroughCaddy(t *testing.T) {
	rs := registry.New(registry.Config{})
	remote := registrytest.Start(t, rs, httpapi.ServerConfig{Addr: "127.0.0.1:0"}).URL()
	eu := newBackend(t, "eu")
	registerVia(t, remote, eu.instance("orders"))

	loadConfig(t, testConfig("", "registry "+newRegistry("regions-test")+"\n\t\tremote_regions eu-west-1 "+remote,
		site(registryPort, "\teureka_server"),
		site(gatewayPort, "\teureka_gateway {\n\t\tfailover_regions eu-west-1\n\t}")))

	testkit.Eventually(t, 5*time.Second, "the remote region read", func() bool {
		status, body := do(t, "GET", registryURL+"apps?regions=eu-west-1", nil)
		return status == 200 && strings.Contains(body, "<instanceId>eu</instanceId>")
	})
	if _, body := do(t, "GET", registryURL+"apps", nil); strings.Contains(body, "<instanceId>eu</instanceId>") {
		t.Errorf("a read without regions has the remote region's instance:\n%s", body)
	}
	if routed := getOK(t, 5*time.Second, "the gateway failing over to eu-west-1", gatewayURL+"/orders/items/7"); routed != "eu /items/7 xff=true" {
		t.Errorf("routed to %q", routed)
	}
	eu2 := newBackend(t, "eu2")
	registerVia(t, remote, eu2.instance("orders"))
	testkit.Eventually(t, 5*time.Second, "the remote region's registration", func() bool {
		_, body := do(t, "GET", registryURL+"apps?regions=eu-west-1", nil)
		return strings.Contains(body, "<instanceId>eu2</instanceId>")
	})
	// Back to a config without remote regions: its feeds stop (goleak
	// checks at the end that nothing is left running).
	loadConfig(t, testConfig("", "registry "+newRegistry("regions-after"), site(registryPort, "\teureka_server")))
}

// failover_regions must name remote regions the eureka app serves.
func TestFailoverRegionsMustBeServed(t *testing.T) {
	store := registry.New(registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}}})
	if err := checkFailoverRegions([]string{"EU-West"}, store); err != nil {
		t.Errorf("a served region: %v", err)
	}
	if err := checkFailoverRegions([]string{"ap-south"}, store); err == nil || !strings.Contains(err.Error(), "remote_regions") {
		t.Errorf("an unknown region: %v", err)
	}
	if err := checkFailoverRegions([]string{"eu-west"}, nil); err == nil {
		t.Error("a region accepted for a registry in remote mode")
	}
	if err := checkFailoverRegions(nil, nil); err != nil {
		t.Errorf("none: %v", err)
	}
}

// remote_region_max_instances reaches the region's feed: a region over
// it is refused, and /eureka/status says why.
func TestRemoteRegionBoundThroughCaddy(t *testing.T) {
	rs := registry.New(registry.Config{})
	remote := registrytest.Start(t, rs, httpapi.ServerConfig{Addr: "127.0.0.1:0"}).URL()
	for _, id := range []string{"eu1", "eu2"} {
		testkit.MustRegister(t, rs, testkit.Inst("ORDERS", id), false)
	}
	loadConfig(t, testConfig("", "registry "+newRegistry("region-bound")+"\n\t\tremote_regions eu-west-1 "+remote+"\n\t\tremote_region_max_instances 1",
		site(registryPort, "\teureka_server")))
	testkit.Eventually(t, 5*time.Second, "the region refused over remote_region_max_instances", func() bool {
		_, body := do(t, "GET", registryURL+"status", nil)
		return strings.Contains(body, "more than the 1 allowed") && strings.Contains(body, "MaxRegionInstances (1)")
	})
	if status, body := do(t, "GET", registryURL+"apps?regions=eu-west-1", nil); status != http.StatusForbidden {
		t.Errorf("a read asking for the refused region: %d %.200s, want 403 (never read)", status, body)
	}
	loadConfig(t, testConfig("", "registry "+newRegistry("region-bound-after"), site(registryPort, "\teureka_server")))
}
