package caddymodule

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// In a site bound to 127.0.0.1 that matches any host and authenticates
// nothing, eureka_server and eureka_dashboard answer a rebound page's
// Host with 403 naming allowed_hosts, and answer it once allowed; loopback
// hosts keep working. With basic_auth in the server, every Host is
// answered, as the standalone server does with credentials.
func TestAllowedHostsInCaddy(t *testing.T) {
	base := "http://127.0.0.1:" + registryPort
	foreign := "rebind.attacker.example:" + registryPort
	for _, c := range []struct {
		name, eureka, body string
		want               int
	}{
		{"loopback, no auth", "", "\teureka_server\n\teureka_dashboard", 403},
		{"allowed", "allowed_hosts rebind.attacker.example other.example:1", "\teureka_server\n\teureka_dashboard", 200},
		{"basic_auth", "", fmt.Sprintf("\t@writes not method GET HEAD\n\tbasic_auth @writes {\n\t\tops %s\n\t}\n\teureka_server\n\teureka_dashboard", testkit.PasswordHash(t, "s3cret")), 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			loadConfig(t, testConfig("", "registry "+newRegistry("allowed-hosts")+"\n\t\t"+c.eureka, site(registryPort, c.body)))
			inst := string(eureka.AppendInstanceJSON(nil, instanceAt("rebind-1", "CSRFT", 1)))
			testkit.Eventually(t, 5*time.Second, "the config to load", func() bool {
				return testkit.StatusAs(t, "POST", base+"/eureka/apps/CSRFT", "ops", "s3cret", inst) == http.StatusNoContent &&
					testkit.StatusAs(t, "GET", base+"/eureka/apps/CSRFT/rebind-1", "", "", "") == http.StatusOK
			})
			for _, host := range []string{foreign, "localhost:" + registryPort, "127.0.0.1:" + registryPort} {
				want := http.StatusOK
				if host == foreign {
					want = c.want
				}
				for _, r := range []struct{ method, path string }{
					{"GET", "/api/summary"}, {"GET", "/eureka/apps/"}, {"GET", "/"},
				} {
					code, body := testkit.Rebound(t, r.method, base+r.path, host)
					if code != want {
						t.Errorf("%s %s with Host %s: %d, want %d", r.method, r.path, host, code, want)
					}
					if code == http.StatusForbidden && !strings.Contains(body, "allowed_hosts") {
						t.Errorf("the refusal does not name allowed_hosts: %q", body)
					}
				}
			}
			if c.name != "basic_auth" { // there, writes need credentials
				code, _ := testkit.Rebound(t, "PUT", base+"/eureka/apps/CSRFT/rebind-1/status?value=OUT_OF_SERVICE", foreign)
				if code != c.want {
					t.Errorf("a rebound page's write: %d, want %d", code, c.want)
				}
			}
		})
	}
}
