package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/internal/proc"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// The built gateway binary lists our modules next to Caddy's, and adapts
// the root Caddyfile.
func TestBinaryListsModules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Caddy binary")
	}
	bin := filepath.Join(t.TempDir(), "caddy")
	if err := proc.GoBuild(context.Background(), "", nil, bin, "."); err != nil {
		t.Fatal(err)
	}
	for _, id := range testkit.UnlistedModules(t, bin, "http.handlers.reverse_proxy") { // and a standard module
		t.Errorf("list-modules lacks %s", id)
	}
	out, err := exec.Command(bin, "adapt", "--config", "../../Caddyfile").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"eureka_gateway"`) {
		t.Fatalf("adapt the root Caddyfile: %v\n%s", err, out)
	}
}
