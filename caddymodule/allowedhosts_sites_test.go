package caddymodule

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// Another site of the same server (same port, its own host) that has
// basic_auth does not authenticate the requests eureka_server and
// eureka_dashboard get in a site that authenticates nothing: the site
// matches its own host and ends there, so a rebound page's Host still
// gets 403 from the registry's site.
func TestAllowedHostsBesideAnAuthenticatedSite(t *testing.T) {
	base := "http://127.0.0.1:" + registryPort
	loadConfig(t, testConfig("", "registry "+newRegistry("allowed-hosts-sites"),
		site(registryPort, "\teureka_server\n\teureka_dashboard"), adminSite(t)))
	testkit.Eventually(t, 5*time.Second, "the config to load", func() bool {
		return testkit.StatusAs(t, "GET", base+"/eureka/apps/", "", "", "") == http.StatusOK
	})
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.Host = "admin.localhost:" + registryPort
	if resp, _ := testkit.Do(t, http.DefaultClient, req); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the admin site without credentials: %d, want 401 (its basic_auth in force)", resp.StatusCode)
	}
	foreign := "rebind.attacker.example:" + registryPort
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/summary"}, {"GET", "/eureka/apps/"}, {"GET", "/"},
		{"PUT", "/eureka/apps/CSRFT/rebind-1/status?value=OUT_OF_SERVICE"},
	} {
		code, body := testkit.Rebound(t, r.method, base+r.path, foreign)
		if code != http.StatusForbidden || !strings.Contains(body, "allowed_hosts") {
			t.Errorf("%s %s with Host %s: %d %.80q, want 403 naming allowed_hosts", r.method, r.path, foreign, code, body)
		}
	}
}

// adminSite is a site of the registry's server (its port, bound to
// 127.0.0.1) with a host of its own, admin.localhost, behind basic_auth.
func adminSite(t *testing.T) string {
	return fmt.Sprintf("http://admin.localhost:%s {\n\tbind 127.0.0.1\n\tbasic_auth {\n\t\tadmin %s\n\t}\n\trespond \"admin\"\n}\n",
		registryPort, testkit.PasswordHash(t, "s3cret"))
}
