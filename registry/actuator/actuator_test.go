package actuator

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	registrymetrics "github.com/eurekagate/eurekagate/registry/metrics"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

// serve runs the endpoints of cfg over loopback and returns their base
// URL.
func serve(t *testing.T, cfg Config) string {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = registry.New(registry.Config{})
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return srv.URL + a.cfg.BasePath
}

// get returns the status code and the JSON body of a GET.
func get(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	code, body := testkit.HTTPGet(t, url)
	var m map[string]any
	if code != http.StatusNotFound {
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("GET %s: %d %q: %v", url, code, body, err)
		}
	}
	return code, m
}

// Readiness is OUT_OF_SERVICE, 503, until the start-up sync is done, and
// UP, 200, after; liveness is UP throughout; health aggregates them with
// the registry's components.
func TestReadinessFollowsTheStartupSync(t *testing.T) {
	ready := make(chan struct{})
	api := httpapi.NewAPI(registry.New(registry.Config{}), httpapi.APIConfig{Ready: ready})
	base := serve(t, Config{Store: api.Store(), NotReady: api.NotReady})
	for path, want := range map[string]struct {
		code   int
		status string
	}{
		"/health/readiness": {503, "OUT_OF_SERVICE"},
		"/health/liveness":  {200, "UP"},
		"/health":           {503, "OUT_OF_SERVICE"},
	} {
		if code, body := get(t, base+path); code != want.code || body["status"] != want.status {
			t.Errorf("before the sync, %s: %d %v, want %d %s", path, code, body, want.code, want.status)
		}
	}
	close(ready)
	for _, path := range []string{"/health/readiness", "/health/liveness", "/health"} {
		if code, body := get(t, base+path); code != 200 || body["status"] != "UP" {
			t.Errorf("after the sync, %s: %d %v", path, code, body)
		}
	}
	_, body := get(t, base+"/health")
	comps, _ := body["components"].(map[string]any)
	for _, c := range []string{"ping", "livenessState", "readinessState", "startupSync"} {
		if _, ok := comps[c]; !ok {
			t.Errorf("health's components lack %s: %v", c, body)
		}
	}
}

// Once the registry shuts down (httpapi.API.Close, as its server's Stop
// calls it) readiness and the registry's own /health both say not ready:
// they read one decision, httpapi.API.NotReady. The start-up sync stays
// done; liveness stays UP.
func TestReadinessDuringShutdown(t *testing.T) {
	ready := make(chan struct{})
	close(ready)
	api := httpapi.NewAPI(registry.New(registry.Config{}), httpapi.APIConfig{Ready: ready})
	base := serve(t, Config{Store: api.Store(), NotReady: api.NotReady})
	registryHealth := httptest.NewServer(httpapi.NewHTTPHandler(api))
	t.Cleanup(registryHealth.Close)
	if code, body := get(t, base+"/health/readiness"); code != 200 || body["status"] != "UP" {
		t.Fatalf("readiness before the shutdown: %d %v", code, body)
	}
	api.Close()
	if code, body := get(t, base+"/health/readiness"); code != 503 || body["status"] != "OUT_OF_SERVICE" {
		t.Errorf("readiness during the shutdown: %d %v, want 503 OUT_OF_SERVICE", code, body)
	}
	if code, body := get(t, base+"/health/liveness"); code != 200 || body["status"] != "UP" {
		t.Errorf("liveness during the shutdown: %d %v", code, body)
	}
	_, body := get(t, base+"/health")
	comps, _ := body["components"].(map[string]any)
	if sync, _ := comps["startupSync"].(map[string]any); sync["status"] != "UP" {
		t.Errorf("startupSync during the shutdown: %v", comps["startupSync"])
	}
	if code, body := testkit.HTTPGet(t, registryHealth.URL+httpapi.HealthPath); code != 503 || body != `{"status":"DOWN","reason":"shutting down"}` {
		t.Errorf("/health during the shutdown: %d %s", code, body)
	}
}

// Only the exposed endpoints answer: health alone by default; the
// prometheus endpoint is Prometheus text with the families of /metrics.
func TestExposure(t *testing.T) {
	base := serve(t, Config{})
	for path, want := range map[string]int{"/health": 200, "/info": 404, "/prometheus": 404, "/env": 404, "": 200} {
		if code, _ := testkit.HTTPGet(t, base+path); code != want {
			t.Errorf("by default, %s: %d, want %d", path, code, want)
		}
	}
	store := registry.New(registry.Config{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(registrymetrics.New(store, nil, "eureka"))
	base = serve(t, Config{Store: store, Exposure: []string{"*"}, Prometheus: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), BasePath: "/manage/"})
	code, body := testkit.HTTPGet(t, base+"/prometheus")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if code != 200 || err != nil || families["eureka_renew_threshold"] == nil {
		t.Errorf("prometheus: %d %v, %d families", code, err, len(families))
	}
	if code, info := get(t, base+"/info"); code != 200 || info["build"] == nil {
		t.Errorf("info: %d %v", code, info)
	}
	_, links := get(t, base)
	if l, _ := links["_links"].(map[string]any); len(l) != 5 {
		t.Errorf("links: %v", links)
	}
}

// A caller Details refuses gets the status alone.
func TestDetailsHidden(t *testing.T) {
	base := serve(t, Config{Details: func(r *http.Request) bool { return r.Header.Get("Authorization") != "" }})
	_, body := get(t, base+"/health")
	if _, shown := body["components"]; shown || body["status"] != "UP" {
		t.Errorf("anonymous health: %v", body)
	}
	req := testkit.JSONRequest(t, "GET", base+"/health", "")
	req.SetBasicAuth("ops", "x")
	_, text := testkit.Do(t, http.DefaultClient, req)
	if !strings.Contains(text, `"components"`) {
		t.Errorf("health with credentials: %s", text)
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestRefusedConfigs(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Exposure: []string{"metrics"}}, `actuator endpoint "metrics": not served here (health, info, prometheus, or *)`},
		{Config{Exposure: []string{"prometheus"}}, "prometheus exposed without a metrics handler"},
		{Config{BasePath: "/"}, "actuator base path /"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}
