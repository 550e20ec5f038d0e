package gateway

import (
	"os"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/eurekagate/eurekagate/caddymodule"
)

// The example Caddyfile adapts and its config validates (every module
// provisions), without listening on its ports.
func TestExampleCaddyfile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", dir)
	body, err := os.ReadFile("Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	cfgJSON, _, err := caddyconfig.GetAdapter("caddyfile").Adapt(body, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"eureka_gateway"`, `"eureka_server"`, `"source":"eureka"`, `"policy":"eureka_round_robin"`} {
		if !strings.Contains(string(cfgJSON), want) {
			t.Errorf("adapted config lacks %s", want)
		}
	}
	var cfg caddy.Config
	if err := caddy.StrictUnmarshalJSON(cfgJSON, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := caddy.Validate(&cfg); err != nil {
		t.Fatalf("validate: %v", err)
	}
}
