package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The built gateway binary lists our modules next to Caddy's, and adapts
// the root Caddyfile.
func TestBinaryListsModules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Caddy binary")
	}
	bin := filepath.Join(t.TempDir(), "caddy")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "list-modules").CombinedOutput()
	if err != nil {
		t.Fatalf("list-modules: %v\n%s", err, out)
	}
	modules := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		modules[strings.TrimSpace(line)] = true
	}
	for _, id := range []string{
		"eureka",
		"http.handlers.eureka_server",
		"http.handlers.eureka_gateway",
		"http.handlers.eureka_dashboard",
		"http.reverse_proxy.upstreams.eureka",
		"http.reverse_proxy.selection_policies.eureka_round_robin",
		"http.reverse_proxy.selection_policies.eureka_least_requests",
		"admin.api.eureka",
		"http.handlers.reverse_proxy", // and the standard modules
	} {
		if !modules[id] {
			t.Errorf("list-modules lacks %s", id)
		}
	}
	out, err = exec.Command(bin, "adapt", "--config", "../../Caddyfile").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"eureka_gateway"`) {
		t.Fatalf("adapt the root Caddyfile: %v\n%s", err, out)
	}
}
