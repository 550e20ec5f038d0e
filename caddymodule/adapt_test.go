package caddymodule

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

var update = flag.Bool("update", false, "rewrite the JSON half of the adapt golden files")

const separator = "\n----------\n"

// adaptCaddyfile runs the Caddyfile adapter and indents the JSON with tabs,
// as caddy's own .caddyfiletest files are written.
func adaptCaddyfile(t *testing.T, body string) string {
	t.Helper()
	out, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(body), nil)
	if err != nil {
		t.Fatalf("adapting: %v", err)
	}
	for _, w := range warnings {
		t.Logf("warning: %s:%d: %s", w.File, w.Line, w.Message)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, out, "", "\t"); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// adaptApp adapts a Caddyfile and returns the eureka app's JSON decoded,
// and the whole JSON.
func adaptApp(t *testing.T, body string) (*App, string) {
	t.Helper()
	out := adaptCaddyfile(t, body)
	var cfg struct {
		Apps struct {
			Eureka *App `json:"eureka"`
		} `json:"apps"`
	}
	if err := json.Unmarshal([]byte(out), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Apps.Eureka, out
}

// TestAdaptGolden checks `caddy adapt` of every directive and option
// against testdata/adapt/*.caddyfiletest (Caddyfile, a line of dashes, the
// expected JSON). Run with -update to rewrite the JSON.
func TestAdaptGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/adapt/*.caddyfiletest")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			caddyfile, want, _ := strings.Cut(string(data), separator)
			got := adaptCaddyfile(t, caddyfile)
			if *update {
				os.WriteFile(file, []byte(strings.TrimRight(caddyfile, "\n")+separator+got+"\n"), 0o644)
				return
			}
			if strings.TrimSpace(got) != strings.TrimSpace(want) {
				t.Errorf("adapted JSON differs:\n%s", got)
			}
		})
	}
}

// The root Caddyfile adapts: the registry on :8761, the gateway on :8080,
// both on loopback only.
func TestRootCaddyfileAdapts(t *testing.T) {
	data, err := os.ReadFile("../Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	got := adaptCaddyfile(t, string(data))
	for _, want := range []string{`"127.0.0.1:8761"`, `"127.0.0.1:8080"`, `"handler": "eureka_server"`, `"handler": "eureka_gateway"`, `"registry": "default"`} {
		if !strings.Contains(got, want) {
			t.Errorf("root Caddyfile: %s missing from\n%s", want, got)
		}
	}
	if strings.Contains(got, `":8761"`) || strings.Contains(got, `":8080"`) {
		t.Errorf("a site listens on every interface:\n%s", got)
	}
}

func TestCaddyfileErrors(t *testing.T) {
	for _, bad := range []string{
		"{\n\teureka {\n\t\tself_preservation maybe\n\t}\n}\nhttp://:1 {\n\trespond ok\n}",
		"{\n\teureka {\n\t\tbogus 1\n\t}\n}\nhttp://:1 {\n\trespond ok\n}",
		"{\n\teureka {\n\t\teviction_interval soon\n\t}\n}\nhttp://:1 {\n\trespond ok\n}",
		"http://:1 {\n\teureka_gateway {\n\t\tmax_fails many\n\t}\n}",
		"http://:1 {\n\teureka_gateway {\n\t\tresponse_header_timeout soon\n\t}\n}",
		"http://:1 {\n\teureka_gateway {\n\t\tdial_timeout\n\t}\n}",
		"{\n\teureka {\n\t\thealth_status 2xy\n\t}\n}\nhttp://:1 {\n\trespond ok\n}",
		"{\n\teureka {\n\t\thealth_status 42\n\t}\n}\nhttp://:1 {\n\trespond ok\n}",
		"http://:1 {\n\treverse_proxy {\n\t\tdynamic eureka\n\t}\n}",
		"http://:1 {\n\teureka_server extra\n}",
		"http://:1 {\n\treverse_proxy {\n\t\tdynamic eureka a\n\t\tlb_policy eureka_least_requests extra\n\t}\n}",
		"http://:1 {\n\treverse_proxy {\n\t\tdynamic eureka a\n\t\tlb_policy eureka_round_robin extra\n\t}\n}",
	} {
		if _, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(bad), nil); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}
