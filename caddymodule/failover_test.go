package caddymodule

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/routing"
)

// The gateway's router gets package routing's defaults, and its
// reverse_proxy the router's timeouts with neither retries nor passive
// health of its own: one attempt to the instance routing picked.
func TestGatewayDefaults(t *testing.T) {
	cfg, err := new(Gateway).routerConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Retries != routing.DefaultRetries || cfg.MaxFails != routing.DefaultMaxFails || cfg.FailDuration != routing.DefaultFailDuration {
		t.Errorf("router config %+v", cfg)
	}
	raw, err := new(Gateway).proxyConfig(cfg, false, false)
	if err != nil {
		t.Fatal(err)
	}
	var proxy map[string]any
	if err := json.Unmarshal(raw, &proxy); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"protocol": "http", "dial_timeout": 3e9, "response_header_timeout": 5e9, "read_timeout": 60e9}
	if !reflect.DeepEqual(proxy["transport"], want) {
		t.Errorf("transport %v, want %v", proxy["transport"], want)
	}
	if raw, _ := new(Gateway).proxyConfig(cfg, false, true); strings.Contains(string(raw), "read_timeout") {
		t.Errorf("a read timeout on tunnels: %s", raw)
	}
	if proxy["load_balancing"] != nil || proxy["health_checks"] != nil {
		t.Errorf("reverse_proxy retries or keeps health itself: %s", raw)
	}

	off := adaptCaddyfile(t, "http://:1 {\n\teureka_gateway {\n\t\tlb_retries 0\n\t\tresponse_header_timeout off\n\t}\n}\n")
	if !strings.Contains(off, `"lb_retries": 0`) || !strings.Contains(off, `"response_header_timeout": -1`) {
		t.Errorf("lb_retries 0 and response_header_timeout off: %s", off)
	}
	zero := 0
	if cfg, _ := (&Gateway{Retries: &zero}).routerConfig(); cfg.Retries >= 0 {
		t.Errorf("lb_retries 0: %d retries", cfg.Retries)
	}
	neg := -1
	if _, err := (&Gateway{Retries: &neg}).routerConfig(); err == nil {
		t.Error("negative lb_retries accepted")
	}
	if err := (&App{HealthTimeout: caddy.Duration(time.Second)}).Validate(); err == nil {
		t.Error("health_timeout without health_interval accepted")
	}
	cfg, _ = (&Gateway{ResponseHeaderTimeout: -1}).routerConfig()
	if raw, _ := new(Gateway).proxyConfig(cfg, false, false); strings.Contains(string(raw), "response_header_timeout") {
		t.Errorf("response_header_timeout off: %s", raw)
	}
}

func instanceAt(id, app string, port int) *eureka.InstanceInfo {
	return &eureka.InstanceInfo{
		InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", App: strings.ToUpper(app), IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: port, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
	}
}

// Three instances, the middle one hung (it accepts and never answers).
// With the gateway's defaults (but a short response_header_timeout, to
// keep the test short), no request reaches the hung instance after its
// first timeout: clients see at most the requests in flight to it then
// fail, and none with lb_retries 1, the default, since GETs are retried.
func TestGatewayStopsSendingToHungInstance(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct{ name, options string }{
		{"lb_retries 0", "lb_retries 0"},
		{"defaults", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loadConfig(t, gatewayConfig("registry "+newRegistry("hang-test"),
				fmt.Sprintf("response_header_timeout %v\n\t\t%s", timeout, tc.options)))
			a, c := newBackend(t, "a"), newBackend(t, "c")
			hung := testkit.NewHung(t, "b")
			registerVia(t, registryURL, a.instance("inventory"))
			registerVia(t, registryURL, instanceAt("b", "inventory", hung.Port()))
			registerVia(t, registryURL, c.instance("inventory"))

			get := func(n int) (string, error) {
				resp, err := client.Get(gatewayURL + "/inventory/items/7?n=" + strconv.Itoa(n))
				if err != nil {
					return "", err
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 {
					return "", fmt.Errorf("%d %s", resp.StatusCode, body)
				}
				return string(body), nil
			}
			run := testkit.RunAgainstHung(hung, 6, 100, 5*time.Second, get)
			run.Check(t, tc.options == "", "a /items/7 xff=true", "c /items/7 xff=true")
		})
	}
}

// healthBackend is an instance of a service whose health URL answers with
// status.
type healthBackend struct {
	*backend
	status atomic.Int32
}

func newHealthBackend(t *testing.T, name string) *healthBackend {
	h := &healthBackend{backend: newBackend(t, name)}
	h.status.Store(200)
	inner := h.srv.Config.Handler
	h.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			w.WriteHeader(int(h.status.Load()))
			return
		}
		inner.ServeHTTP(w, r)
	})
	return h
}

func (h *healthBackend) instance(app string) *eureka.InstanceInfo {
	i := h.backend.instance(app)
	i.HealthCheckURL = h.srv.URL + "/health"
	return i
}

// With health_interval on the eureka app, an instance whose health URL
// starts answering 503 stops getting requests within two check intervals,
// and gets them again within two intervals of answering 200.
func TestGatewayActiveHealthChecks(t *testing.T) {
	const interval = 150 * time.Millisecond
	loadConfig(t, gatewayConfig(fmt.Sprintf("registry %s\n\t\thealth_interval %v", newRegistry("active-health-test"), interval), ""))
	a, b, c := newHealthBackend(t, "a"), newHealthBackend(t, "b"), newHealthBackend(t, "c")
	for _, h := range []*healthBackend{a, b, c} {
		registerVia(t, registryURL, h.instance("stock"))
	}
	count := func(n int) map[string]int {
		m := map[string]int{}
		for _, name := range route(t, "/stock/items/7", n) {
			m[name]++
		}
		return m
	}
	if got := count(6); got["a"] != 2 || got["b"] != 2 || got["c"] != 2 {
		t.Fatalf("all healthy: %v", got)
	}

	b.status.Store(503)
	start := time.Now()
	testkit.Eventually(t, 2*interval, "b out of the rotation", func() bool { return count(4)["b"] == 0 })
	t.Logf("out of the rotation %v after its health URL answered 503", time.Since(start).Round(time.Millisecond))
	if got := route(t, "/stock/items/7", 30); !alternates(got, "a", "c") {
		t.Fatalf("with b failing its check: %v", got)
	}

	b.status.Store(200)
	start = time.Now()
	testkit.Eventually(t, 2*interval, "b back in the rotation", func() bool { return count(3)["b"] == 1 })
	t.Logf("back %v after its health URL answered 200", time.Since(start).Round(time.Millisecond))

	// No instance passing: 503 with the reason.
	for _, h := range []*healthBackend{a, b, c} {
		h.status.Store(500)
	}
	testkit.Eventually(t, 2*interval, "503 with every instance failing", func() bool {
		status, body := do(t, "GET", gatewayURL+"/stock/items/7", nil)
		return status == 503 && body == "application \"stock\" has no instance passing its health check\n"
	})
}
