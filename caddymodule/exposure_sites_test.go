package caddymodule

import (
	"strings"
	"testing"
)

// Another site of the same server with its own host and basic_auth does
// not authenticate the registry's site: a registry served beyond
// loopback without authentication in its own site is warned about.
func TestWarnsWhenExposedBesideAnAuthenticatedSite(t *testing.T) {
	real := beyondLoopback
	t.Cleanup(func() { beyondLoopback = real })
	beyondLoopback = func(listen []string) []string { return listen } // as if exposed
	logged := loadLogged(t, "exposed-sites-test", site(registryPort, "\teureka_server"), adminSite(t))
	if !strings.Contains(logged, "the registry is served beyond loopback without authentication") || !strings.Contains(logged, `"handlers":["eureka_server"]`) {
		t.Errorf("no warning naming eureka_server:\n%s", logged)
	}
}
