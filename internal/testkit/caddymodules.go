package testkit

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// CaddyModules are the IDs of the Caddy modules that caddymodule registers.
var CaddyModules = []string{
	"eureka",
	"http.handlers.eureka_server",
	"http.handlers.eureka_gateway",
	"http.handlers.eureka_dashboard",
	"http.reverse_proxy.upstreams.eureka",
	"http.reverse_proxy.selection_policies.eureka_round_robin",
	"http.reverse_proxy.selection_policies.eureka_least_requests",
	"admin.api.eureka",
}

// UnlistedModules runs the Caddy binary bin's list-modules and returns the
// IDs of CaddyModules, and of also, that it does not list. It fails the
// test if list-modules fails.
func UnlistedModules(t testing.TB, bin string, also ...string) []string {
	t.Helper()
	out, err := exec.Command(bin, "list-modules").CombinedOutput()
	if err != nil {
		t.Fatalf("list-modules: %v\n%s", err, out)
	}
	listed := strings.Fields(string(out))
	var missing []string
	for _, id := range append(slices.Clone(CaddyModules), also...) {
		if !slices.Contains(listed, id) {
			missing = append(missing, id)
		}
	}
	return missing
}
