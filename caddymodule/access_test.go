package caddymodule

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// The access rule, as the standalone server's (cmd/eureka's
// TestAccessRule): with the documented basic_auth on writes, writes need
// a user's credentials, and reads (the API's and the dashboard) stay open.
func TestAccessRule(t *testing.T) {
	hash := testkit.PasswordHash(t, "s3cret")
	body := fmt.Sprintf("\t@writes not method GET HEAD\n\tbasic_auth @writes {\n\t\tops %s\n\t}\n\teureka_server\n\teureka_dashboard", hash)
	caddytest.NewTester(t).InitServer(testConfig("", "registry access-test", site(registryPort, body)), "caddyfile")
	base := "http://127.0.0.1:" + registryPort
	call := func(method, path, user, body string) int {
		t.Helper()
		return testkit.StatusAs(t, method, base+path, user, "s3cret", body)
	}
	inst := string(eureka.AppendInstanceJSON(nil, instanceAt("access-1", "ACCESSED", 1)))
	// The config is loaded when a write with credentials lands in this
	// registry (not a previous test's).
	testkit.Eventually(t, 5*time.Second, "the config to load", func() bool {
		return call("POST", "/eureka/apps/ACCESSED", "ops", inst) == http.StatusNoContent
	})
	if got := call("POST", "/eureka/apps/ACCESSED", "", inst); got != http.StatusUnauthorized {
		t.Errorf("a write without credentials: %d, want 401", got)
	}
	for _, path := range []string{"/", "/eureka/apps", "/eureka/apps/ACCESSED"} {
		if got := call("GET", path, "", ""); got != http.StatusOK {
			t.Errorf("GET %s without credentials: %d, want 200", path, got)
		}
	}
}
