package caddymodule

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// A Spring Cloud Eureka Server's application.yml named by spring_config
// sets the eureka app's options in Spring's units (the peer, eviction
// every 1500 ms, self-preservation off), and eureka_actuator's readiness
// answers 503 OUT_OF_SERVICE while the node waits for its start-up sync
// from that peer, then 200 UP; only the exposed endpoints answer, and
// prometheus is Prometheus text.
func TestSpringConfigAndReadiness(t *testing.T) {
	peer := testkit.NewHeldPeer(t)
	file := filepath.Join(t.TempDir(), "application.yml")
	yml := "eureka:\n  client:\n    serviceUrl:\n      defaultZone: " + peer.URL + "\n" +
		"  server:\n    enableSelfPreservation: false\n    eviction-interval-timer-in-ms: 1500\n    use-read-only-response-cache: false\n"
	if err := os.WriteFile(file, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	name := newRegistry("spring")
	loadConfig(t, testConfig("", "registry "+name+"\n\t\tspring_config "+file,
		site(registryPort, "\teureka_actuator {\n\t\texposure health prometheus\n\t}\n\teureka_server")))
	e, ok := lookupEntry(name)
	if !ok {
		t.Fatal("no registry")
	}
	st := e.settings.store
	if !st.DisableSelfPreservation || st.EvictionInterval != 1500*time.Millisecond || len(e.settings.peers.Peers) != 1 {
		t.Errorf("the Spring file's settings: %+v, peers %v", st, e.settings.peers.Peers)
	}
	base := "http://127.0.0.1:" + registryPort + "/actuator"
	readiness := func() (int, string) {
		code, body := testkit.HTTPGet(t, base+"/health/readiness")
		var m struct{ Status string }
		json.Unmarshal([]byte(body), &m)
		return code, m.Status
	}
	if code, s := readiness(); code != 503 || s != "OUT_OF_SERVICE" {
		t.Errorf("readiness while syncing: %d %s", code, s)
	}
	peer.Release()
	testkit.Eventually(t, 10*time.Second, "readiness UP", func() bool {
		code, s := readiness()
		return code == 200 && s == "UP"
	})
	code, body := testkit.HTTPGet(t, base+"/prometheus")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if code != 200 || err != nil || families["caddy_eureka_renew_threshold"] == nil {
		t.Errorf("prometheus: %d %v, %d families", code, err, len(families))
	}
	if code, _ := testkit.HTTPGet(t, base+"/info"); code != 404 {
		t.Errorf("info, not exposed: %d", code)
	}
}

// The app's own options win over the Spring file's, saying so; what a
// Caddyfile sets elsewhere is logged as having no effect; a value of the
// wrong type fails with its file:line and property.
func TestSpringConfigPrecedenceAndRefusals(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "application.yml")
	os.WriteFile(file, []byte("server:\n  port: 8761\neureka:\n  server:\n    eviction-interval-timer-in-ms: 1500\n    renewal-percent-threshold: 0.5\n"), 0o644)
	core, logs := observer.New(zap.InfoLevel)
	a := &App{SpringConfig: file, EvictionInterval: caddy.Duration(time.Second), log: zap.New(core)}
	if err := a.applySpring(); err != nil {
		t.Fatal(err)
	}
	if a.EvictionInterval != caddy.Duration(time.Second) || a.RenewalPercentThreshold != 0.5 {
		t.Errorf("options: eviction %v, threshold %v", a.EvictionInterval, a.RenewalPercentThreshold)
	}
	var lines []string
	for _, e := range logs.All() {
		lines = append(lines, e.Message)
	}
	for _, want := range []string{
		"the eureka app's own option wins over " + file + ":5 eureka.server.eviction-interval-timer-in-ms",
		file + ":2 server.port: ignored in Caddy (no effect here: the site's address in the Caddyfile is where the registry listens)",
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("no line %q in %q", want, lines)
		}
	}
	os.WriteFile(file, []byte("eureka.server.renewal-percent-threshold: 2\n"), 0o644)
	err := (&App{SpringConfig: file, log: zap.NewNop()}).applySpring()
	if want := "spring_config: " + file + ":1 eureka.server.renewal-percent-threshold: 2 is not above 0 and at most 1"; err == nil || err.Error() != want {
		t.Errorf("a threshold of 2: %v, want %q", err, want)
	}
}
