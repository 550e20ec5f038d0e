package caddymodule

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// Each configuration mistake is refused when the Caddyfile is adapted,
// with one line naming the directive, the value and the fix, and the
// Caddyfile line.
func TestCaddyfileConfigErrors(t *testing.T) {
	msgs := expectCaddyfileErrors(t, []caddyfileError{
		{"remote URL", withEurekaOptions("\t\tremote \"http://bad host:8761/eureka/\"\n"),
			[]string{"remote", `"http://bad host:8761/eureka/"`, "write it as http://host:8761/eureka/", "Caddyfile:3"}},
		{"peer URL", withEurekaOptions("\t\tregistry x\n\t\tpeers http://ok:8761/eureka/ \"http://bad host:8761/eureka/\"\n"),
			[]string{"peers", `"http://bad host:8761/eureka/"`, "Caddyfile:4"}},
		{"self URL", withEurekaOptions("\t\tself_url eureka-1:8761\n"),
			[]string{"self_url", `"eureka-1:8761"`, "http://host:8761/eureka/", "Caddyfile:3"}},
		{"negative duration", withEurekaOptions("\t\teviction_interval -5s\n"),
			[]string{"eviction_interval -5s", "positive", "default, 1m", "Caddyfile:3"}},
		{"zero duration", withEurekaOptions("\t\tremote http://e:8761/eureka/\n\t\tfetch_interval 0s\n"),
			[]string{"fetch_interval 0s", "positive", "default, 30s", "Caddyfile:4"}},
		{"not a duration", withEurekaOptions("\t\tdelta_retention soon\n"),
			[]string{"delta_retention", `"soon"`, "such as 30s", "Caddyfile:3"}},
		{"two eureka blocks", "{\n\teureka {\n\t\tregistry a\n\t}\n\teureka {\n\t\tregistry b\n\t}\n}\nhttp://:1 {\n\trespond ok\n}\n",
			[]string{"eureka", "twice", "merge them into one", "Caddyfile:5"}},
		{"remote with a local setting after it", withEurekaOptions("\t\tremote http://e:8761/eureka/\n\t\teviction_interval 30s\n"),
			[]string{"eviction_interval", "hosted registry", "remote", "Caddyfile:4"}},
		{"remote with a local setting before it", withEurekaOptions("\t\tmax_body_size 2MiB\n\t\tremote http://e:8761/eureka/\n"),
			[]string{"max_body_size", "remote", "Caddyfile:3"}},
		{"remote with peers", withEurekaOptions("\t\tpeers http://p:8761/eureka/\n\t\tremote http://e:8761/eureka/\n"),
			[]string{"peers", "remote", "Caddyfile:3"}},
		{"a remote setting without remote", withEurekaOptions("\t\tregistry x\n\t\tzone eu-1a\n"),
			[]string{"zone", "remote mode only", "Caddyfile:4"}},
		{"allowed_hosts", withEurekaOptions("\t\tallowed_hosts ok.example http://bad.example\n"),
			[]string{"allowed_hosts", `"http://bad.example" is not HOST or HOST:PORT`, "Caddyfile:3"}},
		{"max_body_size", withEurekaOptions("\t\tmax_body_size lots\n"),
			[]string{`max_body_size "lots"`, "such as 512KiB or 1MiB", "Caddyfile:3"}},
		{"renewal_percent_threshold", withEurekaOptions("\t\trenewal_percent_threshold 2\n"),
			[]string{`renewal_percent_threshold "2"`, "at most 1", "Caddyfile:3"}},
		{"dashboard path as matcher", "http://:1 {\n\teureka_server\n\teureka_dashboard /ui\n}\n",
			[]string{"eureka_dashboard /ui", "path /ui", "Caddyfile:3"}},
		{"gateway zero timeout", "http://:1 {\n\teureka_gateway {\n\t\tdial_timeout 0s\n\t}\n}\n",
			[]string{"dial_timeout 0s", "default, 3s", "Caddyfile:3"}},
		{"gateway negative header timeout", "http://:1 {\n\teureka_gateway {\n\t\tresponse_header_timeout -1s\n\t}\n}\n",
			[]string{"response_header_timeout -1s", "or off", "Caddyfile:3"}},
		{"gateway max_fails", "http://:1 {\n\teureka_gateway {\n\t\tmax_fails 0\n\t}\n}\n",
			[]string{"max_fails 0", "at least 1", "Caddyfile:3"}},
		{"gateway lb_retries", "http://:1 {\n\teureka_gateway {\n\t\tlb_retries -1\n\t}\n}\n",
			[]string{"lb_retries -1", "Caddyfile:3"}},
		{"gateway max_fails not a number", "http://:1 {\n\teureka_gateway {\n\t\tmax_fails many\n\t}\n}\n",
			[]string{`max_fails "many"`, "whole number", "Caddyfile:3"}},
	})
	if msg := msgs["peer URL"]; strings.Contains(msg, "service URL") {
		t.Errorf("peer URL: not a plain one-line message: %q", msg)
	}
}

// The same mistakes in a JSON config are refused when it is provisioned,
// with the same one-line messages (and no fx wiring dump).
func TestJSONConfigErrors(t *testing.T) {
	expectAppErrors(t, []appError{
		{`{"registry":"json-1","peers":["http://bad host:8761/eureka/"]}`, []string{"peers", `"http://bad host:8761/eureka/"`}},
		{`{"remote":["ftp://e/eureka/"]}`, []string{"remote", `"ftp://e/eureka/"`, "http or https"}},
		{`{"registry":"json-2","eviction_interval":-5000000000}`, []string{"eviction_interval -5s", "default, 1m"}},
		{`{"remote":["http://e:8761/eureka/"],"self_preservation":false}`, []string{"self_preservation", "remote"}},
		{`{"registry":"json-3","disable_watch":true}`, []string{"disable_watch", "remote mode only"}},
	})
}

// A reload that changes a running registry's settings is refused naming
// each setting that differs, with both values.
func TestChangedSettingsNamed(t *testing.T) {
	running := &App{Registry: "changed-settings", EvictionInterval: caddy.Duration(time.Minute), SelfPreservation: boolPtr(true)}
	if err := provisionApp(t, running); err != nil {
		t.Fatal(err)
	}
	defer running.Cleanup()
	same := &App{Registry: "changed-settings", EvictionInterval: caddy.Duration(time.Minute), SelfPreservation: boolPtr(true),
		HealthInterval: caddy.Duration(time.Second)} // health checks belong to each config
	if err := provisionApp(t, same); err != nil {
		t.Fatalf("the same settings refused: %v", err)
	}
	same.Cleanup()
	changed := &App{Registry: "changed-settings", EvictionInterval: caddy.Duration(30 * time.Second), MaxBodySize: 2048}
	err := provisionApp(t, changed)
	if err == nil {
		changed.Cleanup()
		t.Fatal("changed settings accepted")
	}
	for _, want := range []string{
		`registry "changed-settings"`,
		"eviction_interval (running: 1m, new: 30s)",
		"max_body_size (running: default, new: 2048)",
		"self_preservation (running: on, new: default)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

// A config that names a new registry while another is running logs that
// the other's registrations go.
func TestRenamedRegistryLogged(t *testing.T) {
	old := &App{Registry: "rename-old"}
	if err := provisionApp(t, old); err != nil {
		t.Fatal(err)
	}
	defer old.Cleanup()
	core, logs := observer.New(zap.WarnLevel)
	warnRenamed(zap.New(core), "rename-new")
	found := false
	for _, e := range logs.All() {
		f := e.ContextMap()
		if strings.Contains(e.Message, "registry renamed") && f["dropped"] == "rename-old" && f["registry"] == "rename-new" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no warning naming both registries: %+v", logs.All())
	}
}
