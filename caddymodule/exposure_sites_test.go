package caddymodule

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// Another site of the same server with its own host and basic_auth does
// not authenticate the registry's site: a registry served beyond
// loopback without authentication in its own site is warned about.
func TestWarnsWhenExposedBesideAnAuthenticatedSite(t *testing.T) {
	real := beyondLoopback
	t.Cleanup(func() { beyondLoopback = real })
	beyondLoopback = func(listen []string) []string { return listen } // as if exposed
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	globals := fmt.Sprintf("log {\n\t\toutput file %s\n\t\tformat json\n\t}", logFile)
	admin := fmt.Sprintf("http://admin.localhost:%s {\n\tbind 127.0.0.1\n\tbasic_auth {\n\t\tadmin %s\n\t}\n\trespond \"admin\"\n}\n",
		registryPort, testkit.PasswordHash(t, "s3cret"))
	loadConfig(t, testConfig(globals, "registry "+newRegistry("exposed-sites-test"), site(registryPort, "\teureka_server"), admin))
	var logged string
	testkit.Eventually(t, 5*time.Second, "the config to start", func() bool {
		b, _ := os.ReadFile(logFile)
		logged = string(b)
		return strings.Contains(logged, "serving initial configuration") || strings.Contains(logged, "load complete")
	})
	if !strings.Contains(logged, "the registry is served beyond loopback without authentication") || !strings.Contains(logged, `"handlers":["eureka_server"]`) {
		t.Errorf("no warning naming eureka_server:\n%s", logged)
	}
}
