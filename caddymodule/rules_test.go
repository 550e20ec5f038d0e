package caddymodule

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// versionBackend is an instance of version v: it answers with its
// version and the route header it got.
func versionBackend(t *testing.T, app, v string) *eureka.InstanceInfo {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s route=%s", v, r.Header.Get("X-Eurekagate-Route"))
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	n, _ := strconv.Atoi(port)
	return &eureka.InstanceInfo{
		InstanceID: app + "-" + v, HasInstanceID: true, HostName: "127.0.0.1", App: strings.ToUpper(app), IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: n, Enabled: true}, Metadata: map[string]string{"version": v},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
	}
}

// graceful is the registry and the gateway on loopback, the old config's
// servers given time to finish their requests when a new one replaces it.
func graceful(eureka, gateway string) string {
	return testConfig("grace_period 5s", eureka, site(registryPort, "\teureka_server"),
		site(gatewayPort, "\teureka_gateway {\n\t\t"+gateway+"\n\t}"))
}

// rulesHeredoc is a rules document in a Caddyfile heredoc, indented for
// the gateway's block.
func rulesHeredoc(doc string) string {
	return "rules <<YAML\n" + doc + "\nYAML"
}

func defaultVersion(v string) string {
	return `apps:
  ORDERS:
    default: {version: "` + v + `"}
    rules:
      - match: {header: {X-Canary: "1"}}
        to: [{select: {version: "2.1"}}]`
}

func get(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	return getWith(client, url, header...)
}

// keepAlive keeps its connections, as the clients of a gateway do: a
// reload closes the old config's idle ones, and Go sends a GET again on a
// new one. (A client that dials for every request can meet the instant
// when the old config's socket, bound beside the new one with
// SO_REUSEPORT, closes with connections in its queue: Caddy's reload,
// whatever the handlers.)
var keepAlive = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}

func getWith(c *http.Client, url string, header ...string) (int, string) {
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, err = fmt.Fprint(&b, readAll(resp))
	return resp.StatusCode, b.String()
}

func readAll(resp *http.Response) string {
	var b strings.Builder
	buf := make([]byte, 512)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// A config reload changes eureka_gateway's rules under load, without a
// failed request; a reload whose rules do not parse is refused with the
// line at fault, and the rules in force stay.
func TestGatewayRulesChangeByReload(t *testing.T) {
	name := newRegistry("rules-reload")
	loadConfig(t, graceful("registry "+name, rulesHeredoc(defaultVersion("2.0"))))
	registerVia(t, registryURL, versionBackend(t, "orders", "2.0"))
	registerVia(t, registryURL, versionBackend(t, "orders", "2.1"))

	if status, body := get(t, gatewayURL+"/orders/x", "X-Canary", "1"); status != 200 || body != "2.1 route=version=2.1" {
		t.Fatalf("canary: %d %q", status, body)
	}
	// An outside client cannot pick the subset.
	if status, body := get(t, gatewayURL+"/orders/x", "X-Eurekagate-Route", "version=2.1"); status != 200 || body != "2.0 route=version=2.0" {
		t.Fatalf("a client's route header: %d %q", status, body)
	}

	var failed, sent atomic.Int64
	var last atomic.Value
	stop := testkit.Loop(4, func(int) {
		status, body := getWith(keepAlive, gatewayURL+"/orders/x")
		sent.Add(1)
		if status != 200 {
			failed.Add(1)
			t.Errorf("during the reload: %d %q", status, body)
		}
		last.Store(body)
	})
	defer stop()
	testkit.Eventually(t, 5*time.Second, "load running", func() bool { return sent.Load() > 20 })
	reloaded := time.Now()
	loadConfig(t, graceful("registry "+name, rulesHeredoc(defaultVersion("2.1"))))
	testkit.Eventually(t, 2*time.Second, "traffic on 2.1", func() bool {
		v, _ := last.Load().(string)
		return strings.HasPrefix(v, "2.1 ")
	})
	t.Logf("traffic moved %v after the reload began; %d requests, %d failed", time.Since(reloaded).Round(time.Millisecond), sent.Load(), failed.Load())

	// Broken rules: the reload is refused, naming the line.
	bad := graceful("registry "+name, rulesHeredoc("apps:\n  ORDERS:\n    fallback: sometimes"))
	req, _ := http.NewRequest("POST", adminURL+"/load", strings.NewReader(bad))
	req.Header.Set("Content-Type", "text/caddyfile")
	resp, body := testkit.Do(t, client, req)
	if resp.StatusCode == 200 || !strings.Contains(body, `heredoc:3: apps.ORDERS.fallback: \"sometimes\" is not default, any or none`) {
		t.Fatalf("broken rules: %d %s", resp.StatusCode, body)
	}
	for range 20 {
		if status, body := get(t, gatewayURL+"/orders/x"); status != 200 || !strings.HasPrefix(body, "2.1 ") {
			t.Fatalf("after the refused reload: %d %q", status, body)
		}
	}
	if failed.Load() != 0 {
		t.Fatalf("%d of %d requests failed", failed.Load(), sent.Load())
	}
}

// A rules_file past a limit, or holding YAML aliases, fails the reload
// that reads it with its file, line and reason, and the rules in force
// stay; its limits are the block's.
func TestGatewayRulesFileLimitsOnReload(t *testing.T) {
	name := newRegistry("rules-file-limits")
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(defaultVersion("2.0")), 0o644); err != nil {
		t.Fatal(err)
	}
	loadConfig(t, graceful("registry "+name, "rules "+path))
	registerVia(t, registryURL, versionBackend(t, "orders", "2.0"))
	registerVia(t, registryURL, versionBackend(t, "orders", "2.1"))
	if status, body := get(t, gatewayURL+"/orders/x"); status != 200 || body != "2.0 route=version=2.0" {
		t.Fatalf("before: %d %q", status, body)
	}
	reload := func(cfg, want string) {
		t.Helper()
		req, _ := http.NewRequest("POST", adminURL+"/load", strings.NewReader(cfg))
		req.Header.Set("Content-Type", "text/caddyfile")
		resp, body := testkit.Do(t, client, req)
		if resp.StatusCode == 200 || !strings.Contains(body, want) {
			t.Fatalf("reload: %d %s, want a refusal with %s", resp.StatusCode, body, want)
		}
		if status, body := get(t, gatewayURL+"/orders/x"); status != 200 || body != "2.0 route=version=2.0" {
			t.Fatalf("after the refused reload: %d %q", status, body)
		}
	}
	bomb := filepath.Join(t.TempDir(), "bomb.yaml") // a config of its own: Caddy skips a reload to the config in force
	if err := os.WriteFile(bomb, []byte(testkit.AliasBomb(3, 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	reload(graceful("registry "+name, "rules "+bomb), bomb+":7: apps.A0.rules[1]: a YAML alias (*r) is refused in a rules document")
	if err := os.WriteFile(path, []byte(defaultVersion("2.1")), 0o644); err != nil {
		t.Fatal(err)
	}
	reload(graceful("registry "+name, "rules "+path+"\n\t\trules_max_bytes 100"), path+":6: the document is larger than 100 bytes")
	loadConfig(t, graceful("registry "+name, "rules "+path+"\n\t\trules_max_bytes 1000"))
	if status, body := get(t, gatewayURL+"/orders/x"); status != 200 || body != "2.1 route=version=2.1" {
		t.Fatalf("after a reload within the limit: %d %q", status, body)
	}
}

// The eureka upstream source applies its rules too: the eureka selection
// policy takes turns within the subset, the instance is told the subset,
// and {http.vars.eureka.route} holds it.
func TestUpstreamSourceRules(t *testing.T) {
	name := newRegistry("rules-upstreams")
	doc := `apps:
  ORDERS:
    default: {version: "2.0"}
    rules:
      - match: {header: {X-Canary: "1"}}
        to: [{select: {version: "2.1"}}]
    fallback: none`
	proxy := "\treverse_proxy {\n\t\tdynamic eureka orders {\n\t\t\t" + rulesHeredoc(doc) + "\n\t\t}\n\t\tlb_policy eureka_round_robin\n\t\theader_down X-Subset {http.vars.eureka.route}\n\t}"
	loadConfig(t, testConfig("", "registry "+name, site(registryPort, "\teureka_server"), site(gatewayPort, proxy)))
	registerVia(t, registryURL, versionBackend(t, "orders", "2.0"))
	a := versionBackend(t, "orders", "2.1")
	registerVia(t, registryURL, a)
	b := versionBackend(t, "orders", "2.1")
	b.InstanceID = "orders-2.1-b"
	registerVia(t, registryURL, b)

	for range 10 {
		req, _ := http.NewRequest("GET", gatewayURL+"/x", nil)
		req.Header.Set("X-Canary", "1")
		resp, body := testkit.Do(t, client, req)
		if resp.StatusCode != 200 || body != "2.1 route=version=2.1" || resp.Header.Get("X-Subset") != "version=2.1" {
			t.Fatalf("canary: %d %q subset %q", resp.StatusCode, body, resp.Header.Get("X-Subset"))
		}
	}
	if status, body := get(t, gatewayURL+"/x"); status != 200 || body != "2.0 route=version=2.0" {
		t.Fatalf("default: %d %q", status, body)
	}
	// fallback none: the subset has no instance left.
	for _, id := range []string{a.InstanceID, b.InstanceID} {
		if status, _ := do(t, "DELETE", registryURL+"apps/ORDERS/"+id, nil); status != 200 {
			t.Fatalf("cancel %s: %d", id, status)
		}
	}
	if status, _ := get(t, gatewayURL+"/x", "X-Canary", "1"); status != 503 {
		t.Fatalf("an empty subset with fallback none: %d", status)
	}
}

// inBlock indents a rules document as a heredoc in eureka_gateway's
// block, or in the block of the eureka upstream source, (Caddy strips
// the closing marker's indentation from each line).
func inBlock(doc, indent string) string {
	return strings.ReplaceAll(strings.TrimSuffix(doc, "\n"), "\n", "\n"+indent)
}

// A heredoc past the rules documents' limits is refused at adapt time
// with its line, key and reason, by the limits its block sets, whatever
// their order; so is a condition on a header the gateway sets, or on a
// header name that is no token. The alias bomb of issue 44 is refused
// at its first alias without the heap growing by 100 MB.
func TestCaddyfileRulesLimits(t *testing.T) {
	gatewayBlock := func(opts, doc string) string {
		return "http://:1 {\n\teureka_gateway {\n\t\t" + opts + "rules <<YAML\n\t\t" + inBlock(doc, "\t\t") + "\n\t\tYAML\n\t}\n}\n"
	}
	upstreamBlock := func(opts, doc string) string {
		return "http://:1 {\n\treverse_proxy {\n\t\tdynamic eureka orders {\n\t\t\trules <<YAML\n\t\t\t" + inBlock(doc, "\t\t\t") +
			"\n\t\t\tYAML\n\t\t\t" + opts + "\n\t\t}\n\t}\n}\n"
	}
	twoRules := "apps:\n  ORDERS:\n    rules:\n      - to: [{select: {v: \"1\"}}]\n      - to: [{select: {v: \"2\"}}]\n"
	var msgs map[string]string
	growth := testkit.HeapGrowth(func() {
		msgs = expectCaddyfileErrors(t, []caddyfileError{
			{"alias bomb", gatewayBlock("", testkit.AliasBomb(3, 20)), []string{"heredoc:7: apps.A0.rules[1]: a YAML alias (*r) is refused in a rules document"}},
			{"X-Forwarded-For", gatewayBlock("", "apps:\n  ORDERS:\n    rules:\n      - match: {header: {X-Forwarded-For: 10.9.9.9}}\n        to: [{select: {v: \"1\"}}]\n"),
				[]string{"heredoc:4: apps.ORDERS.rules[0].match.header.X-Forwarded-For: \"X-Forwarded-For\" is a header the gateway sets itself", "use client:"}},
			{"<img>", gatewayBlock("", "apps:\n  ORDERS:\n    rules:\n      - match: {header: {'<img src=x>': a}}\n        to: [{select: {v: \"1\"}}]\n"),
				[]string{`heredoc:4: apps.ORDERS.rules[0].match.header.<img src=x>: "<img src=x>" is not a header name`}},
			{"rules_max_rules", gatewayBlock("rules_max_rules 1\n\t\t", twoRules), []string{"heredoc:5: apps.ORDERS.rules[1]: is a rule past the limit of 1 rules in a document"}},
			{"rules_max_rules after the rules", upstreamBlock("rules_max_rules 1", twoRules), []string{"heredoc:5: apps.ORDERS.rules[1]: is a rule past the limit of 1 rules"}},
			{"rules_max_bytes 0", gatewayBlock("rules_max_bytes 0\n\t\t", twoRules), []string{"rules_max_bytes is 0: a limit is above 0"}},
			{"a huge regex", gatewayBlock("", "apps:\n  ORDERS:\n    rules:\n      - match: {header: {X-User: {regex: '"+testkit.HugeRegex()+"'}}}\n        to: [{select: {v: \"1\"}}]\n"),
				[]string{"heredoc:4: apps.ORDERS.rules[0].match.header.X-User.regex: the regular expressions come to about 91000 instructions compiled, past the limit of 10000"}},
		})
	})
	t.Logf("the heap grew by %.1f MB", float64(growth)/(1<<20))
	if growth > 100<<20 {
		t.Errorf("the heap grew by %d MB", growth>>20)
	}
	if len(msgs["alias bomb"]) > 300 {
		t.Errorf("the alias bomb's refusal is %d bytes long", len(msgs["alias bomb"]))
	}
	// A limit raised after the rules holds for them.
	adapted, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(upstreamBlock("rules_max_rules 2", twoRules)), nil)
	if err != nil || !strings.Contains(string(adapted), `"rules_max_rules":2`) {
		t.Errorf("rules_max_rules 2 after the rules: %v\n%s", err, adapted)
	}
}

// In a JSON config, a negative limit is refused, and so is a limit
// without rules to bound.
func TestRulesLimitsInJSON(t *testing.T) {
	for _, c := range []struct {
		t    TrafficRules
		want string
	}{
		{TrafficRules{Rules: []byte(`{"apps": {}}`), RulesMaxRegexSize: -1}, "eureka_gateway: rules_max_regex_size is -1: a limit is above 0 (leave it out for the default)"},
		{TrafficRules{RulesMaxEcho: 20}, "eureka_gateway: a rules_max_* limit is set without rules or rules_file"},
		{TrafficRules{Rules: []byte(`{"apps": {"ORDERS": {"rules": [{"to": [{"select": {"v": "1"}}]}, {"to": [{"select": {"v": "2"}}]}]}}}`), RulesMaxRules: 1},
			"eureka_gateway rules:1: apps.ORDERS.rules[1]: is a rule past the limit of 1 rules in a document"},
	} {
		if _, err := c.t.load("eureka_gateway"); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.t, err, c.want)
		}
	}
}

func TestCaddyfileRulesRefused(t *testing.T) {
	bad := "http://:1 {\n\teureka_gateway {\n\t\trules <<YAML\n\t\tapps:\n\t\t  ORDERS:\n\t\t    rules:\n\t\t      - match: {header: {X: {regex: \"(\"}}}\n\t\t        to: [{select: {v: \"1\"}}]\n\t\tYAML\n\t}\n}"
	_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(bad), nil)
	if err == nil || !strings.Contains(err.Error(), "heredoc:4: apps.ORDERS.rules[0].match.header.X.regex: error parsing regexp") {
		t.Fatalf("bad rules: %v", err)
	}
}

// eureka_dashboard shows the rules of the config's eureka_gateway, and
// Caddy's metrics count the gateway's requests per subset; a reload
// without the gateway's rules takes them off the dashboard.
func TestGatewayRulesOnDashboardAndMetrics(t *testing.T) {
	name := newRegistry("rules-dashboard")
	withRules := func(gateway string) string {
		return testConfig("metrics", "registry "+name, site(registryPort, "\teureka_server\n\teureka_dashboard"),
			site(gatewayPort, "\teureka_gateway {\n\t\t"+gateway+"\n\t}"))
	}
	loadConfig(t, withRules(rulesHeredoc(defaultVersion("2.0"))))
	registerVia(t, registryURL, versionBackend(t, "orders", "2.0"))
	registerVia(t, registryURL, versionBackend(t, "orders", "2.1"))
	get(t, gatewayURL+"/orders/x", "X-Canary", "1")
	get(t, gatewayURL+"/orders/x")

	status, body := do(t, "GET", "http://127.0.0.1:"+registryPort+"/api/rules", nil)
	if status != 200 || !strings.Contains(body, `"app":"ORDERS"`) || !strings.Contains(body, `"label":"version=2.1"`) ||
		!strings.Contains(body, `"id":"orders-2.1"`) {
		t.Fatalf("dashboard rules: %d %s", status, body)
	}
	_, metrics := do(t, "GET", adminURL+"/metrics", nil)
	for _, want := range []string{`caddy_eureka_gateway_requests_total{app="ORDERS",code="2xx",method="GET",subset="version=2.0"} 1`,
		`caddy_eureka_gateway_requests_total{app="ORDERS",code="2xx",method="GET",subset="version=2.1"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("no %s in the metrics", want)
		}
	}
	// The dashboard's traffic panel has the gateway's requests.
	testkit.Eventually(t, 5*time.Second, "ORDERS in api/traffic", func() bool {
		_, body := do(t, "GET", "http://127.0.0.1:"+registryPort+"/api/traffic", nil)
		return strings.Contains(body, `"enabled":true`) && strings.Contains(body, `"app":"ORDERS"`)
	})
	loadConfig(t, withRules(""))
	if _, body := do(t, "GET", "http://127.0.0.1:"+registryPort+"/api/rules", nil); strings.Contains(body, "ORDERS") {
		t.Fatalf("rules after a reload without them: %s", body)
	}
	// Without a gateway in the config, no traffic panel.
	loadConfig(t, testConfig("metrics", "registry "+name, site(registryPort, "\teureka_server\n\teureka_dashboard")))
	if _, body := do(t, "GET", "http://127.0.0.1:"+registryPort+"/api/traffic", nil); strings.TrimSpace(body) != `{"enabled":false}` {
		t.Fatalf("api/traffic without a gateway: %s", body)
	}
}

// eureka_gateway adds the app and the instance to Caddy's access log
// entries, and counts the request in the gateway metrics, with its
// X-Request-Id given to the instance.
func TestGatewayAccessLogFieldsAndTraffic(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "access.log")
	name := newRegistry("access-log")
	cfg := testConfig("metrics", "registry "+name, site(registryPort, "\teureka_server"),
		site(gatewayPort, "\tlog {\n\t\toutput file "+logFile+"\n\t\tformat json\n\t}\n\teureka_gateway"))
	loadConfig(t, cfg)
	registerVia(t, registryURL, versionBackend(t, "orders", "2.0"))
	if status, body := get(t, gatewayURL+"/orders/x"); status != 200 || !strings.HasPrefix(body, "2.0 ") {
		t.Fatalf("GET: %d %q", status, body)
	}
	get(t, gatewayURL+"/nothing-registered/x")
	testkit.Eventually(t, 5*time.Second, "the access log entry", func() bool {
		data, _ := os.ReadFile(logFile)
		return strings.Contains(string(data), `"app":"ORDERS"`) && strings.Contains(string(data), `"instance":"orders-2.0"`) &&
			strings.Contains(string(data), `"app":"unknown"`)
	})
	_, metrics := do(t, "GET", adminURL+"/metrics", nil)
	for _, want := range []string{
		`caddy_eureka_gateway_requests_total{app="ORDERS",code="2xx",method="GET",subset=""} 1`,
		`caddy_eureka_gateway_requests_total{app="unknown",code="5xx",method="GET",subset=""} 1`,
		`caddy_eureka_gateway_request_duration_seconds_count{app="ORDERS"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("no %s in the metrics", want)
		}
	}
}

// The rules_max_* options are one table (limitOptions): each is its
// field's JSON name, every int field of TrafficRules is in it, and the
// Caddyfile's reader takes exactly them.
func TestRulesLimitOptionsAreTheJSONNames(t *testing.T) {
	var tr TrafficRules
	byField := map[*int]string{}
	for _, l := range tr.limitOptions() {
		byField[l.v] = l.name
		if rulesOption(l.name) != l.name {
			t.Errorf("rulesOption(%q) does not take it", l.name)
		}
	}
	v := reflect.ValueOf(&tr).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Type.Kind() != reflect.Int {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if got := byField[v.Field(i).Addr().Interface().(*int)]; got != tag {
			t.Errorf("field %s: JSON name %q, table's %q", f.Name, tag, got)
		}
	}
	if rulesOption("rules_max_other") != "" {
		t.Error("rulesOption takes an option not in the table")
	}
}
