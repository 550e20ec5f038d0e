package main

import (
	"net/http"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// The access rule, the same as Caddy's documented basic_auth on writes:
// with -auth-users, writes need a user's credentials and reads (the
// API's, the dashboard, /metrics) stay open; -auth-reads closes reads
// too. caddymodule's TestAccessRule holds Caddy to the same rule.
func TestAccessRule(t *testing.T) {
	hash := testkit.PasswordHash(t, "s3cret")
	for _, c := range []struct {
		name        string
		reads       bool
		wantReadsOK bool
	}{{"auth-users", false, true}, {"auth-users and auth-reads", true, false}} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"-addr", "127.0.0.1:0", "-auth-users", "ops:" + hash}
			if c.reads {
				args = append(args, "-auth-reads")
			}
			var srv *httpapi.Server
			startApp(t, args, &srv)
			base := "http://" + srv.Addr().String()
			for _, path := range []string{"/", "/metrics", "/eureka/apps"} {
				want := http.StatusOK
				if !c.wantReadsOK {
					want = http.StatusUnauthorized
				}
				if got := testkit.StatusAs(t, "GET", base+path, "", "", ""); got != want {
					t.Errorf("GET %s without credentials: %d, want %d", path, got, want)
				}
				if got := testkit.StatusAs(t, "GET", base+path, "ops", "s3cret", ""); got != http.StatusOK {
					t.Errorf("GET %s with credentials: %d", path, got)
				}
			}
			inst := string(eureka.AppendInstanceJSON(nil, testkit.Inst("ORDERS", "i")))
			if got := testkit.StatusAs(t, "POST", base+"/eureka/apps/ORDERS", "", "", inst); got != http.StatusUnauthorized {
				t.Errorf("a write without credentials: %d, want 401", got)
			}
			if got := testkit.StatusAs(t, "POST", base+"/eureka/apps/ORDERS", "ops", "s3cret", inst); got != http.StatusNoContent {
				t.Errorf("a write with credentials: %d, want 204", got)
			}
		})
	}
}
