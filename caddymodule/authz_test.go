package caddymodule

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// In Caddy, the eureka app's auth_apps bind the users of the site's
// basic_auth to apps: a user bound to ORDERS writes ORDERS instances and
// gets 403 on PAYMENTS (registering under it too); a pattern binding;
// the operator overrides any app's status; an unbound user writes as
// before. audit_log holds exactly the refused and operator writes.
func TestBindingsInCaddy(t *testing.T) {
	trail := filepath.Join(t.TempDir(), "audit.log")
	hash := testkit.PasswordHash(t, "s3cret")
	users := ""
	for _, u := range []string{"orders", "pay", "ops", "free"} {
		users += fmt.Sprintf("\t\t%s %s\n", u, hash)
	}
	body := "\t@writes not method GET HEAD\n\tbasic_auth @writes {\n" + users + "\t}\n\teureka_server"
	eurekaOpts := "registry " + newRegistry("authz") + "\n\t\tauth_apps orders ORDERS\n\t\tauth_apps pay PAY-*\n\t\tauth_operators ops\n\t\taudit_log " + trail
	caddytest.NewTester(t).InitServer(testConfig("", eurekaOpts, site(registryPort, body)), "caddyfile")
	base := "http://127.0.0.1:" + registryPort + "/eureka/apps/"
	call := func(method, path, user string, want int) {
		t.Helper()
		var b string
		if method == "POST" {
			app, id, _ := strings.Cut(path, "/")
			b = string(eureka.AppendInstanceJSON(nil, testkit.SpringInst(app, id)))
			path = app
		}
		if got := testkit.StatusAs(t, method, base+path, user, "s3cret", b); got != want {
			t.Errorf("%s %s as %s: %d, want %d", method, path, user, got, want)
		}
	}
	testkit.Eventually(t, 5*time.Second, "the config to load", func() bool {
		return testkit.StatusAs(t, "POST", base+"ORDERS", "orders", "s3cret", string(eureka.AppendInstanceJSON(nil, testkit.SpringInst("ORDERS", "o1")))) == http.StatusNoContent
	})
	call("PUT", "ORDERS/o1", "orders", 200)
	call("PUT", "ORDERS/o1/status?value=OUT_OF_SERVICE", "orders", 200)
	call("DELETE", "ORDERS/o1/status", "orders", 200)
	call("POST", "PAYMENTS/p1", "free", 204)
	call("POST", "PAYMENTS/p2", "orders", 403)
	call("PUT", "PAYMENTS/p1", "orders", 403)
	call("PUT", "PAYMENTS/p1/status?value=OUT_OF_SERVICE", "orders", 403)
	call("DELETE", "PAYMENTS/p1", "orders", 403)
	call("POST", "PAY-EU/e1", "pay", 204)
	call("POST", "PAYMENTS/p3", "pay", 403)
	call("PUT", "PAYMENTS/p1/status?value=OUT_OF_SERVICE", "ops", 200)
	call("DELETE", "ORDERS/o1", "orders", 200)

	want := `{"time":"T","account":"orders","source":"127.0.0.1","action":"register","app":"PAYMENTS","outcome":"refused","status":403}
{"time":"T","account":"orders","source":"127.0.0.1","action":"renew","app":"PAYMENTS","instance":"p1","outcome":"refused","status":403}
{"time":"T","account":"orders","source":"127.0.0.1","action":"status","app":"PAYMENTS","instance":"p1","outcome":"refused","status":403}
{"time":"T","account":"orders","source":"127.0.0.1","action":"cancel","app":"PAYMENTS","instance":"p1","outcome":"refused","status":403}
{"time":"T","account":"pay","source":"127.0.0.1","action":"register","app":"PAYMENTS","outcome":"refused","status":403}
{"time":"T","account":"ops","source":"127.0.0.1","action":"status","app":"PAYMENTS","instance":"p1","outcome":"done","status":200}
`
	stamp := regexp.MustCompile(`"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"`)
	var got string
	testkit.Eventually(t, 5*time.Second, "the audit trail", func() bool {
		raw, _ := os.ReadFile(trail)
		got = stamp.ReplaceAllString(string(raw), `"time":"T"`)
		return strings.Count(got, "\n") >= strings.Count(want, "\n")
	})
	if got != want {
		t.Errorf("audit trail:\n%s\nwant\n%s", got, want)
	}
}

// The bindings' options are checked at provisioning: a pattern that is
// not one is refused, naming the option.
func TestBindingOptionErrors(t *testing.T) {
	a := &App{Authz: Authz{AuthApps: map[string][]string{"orders": {"OR/DERS"}}}}
	if err := a.provisionAuthz(); err == nil || !strings.Contains(err.Error(), `auth_apps: orders: "OR/DERS" is not an app name`) {
		t.Errorf("a bad pattern: %v", err)
	}
	a = &App{Authz: Authz{AuditLog: filepath.Join(t.TempDir(), "no", "dir")}}
	if err := a.provisionAuthz(); err == nil || !strings.Contains(err.Error(), "audit_log:") {
		t.Errorf("an audit log in a missing directory: %v", err)
	}
}

// A Spring configuration's eurekagate.auth.* set the bindings the
// Caddyfile leaves unset.
func TestSpringBindingsInCaddy(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "application.yml")
	trail := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(file, []byte("eurekagate.auth:\n  apps:\n    orders: ORDERS,ORDERS-*\n    pay: PAYMENTS\n  operators: ops\n  audit-log: "+trail+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &App{SpringConfig: file, Authz: Authz{AuthApps: map[string][]string{"pay": {"PAY-*"}}}}
	err := provisionApp(t, a)
	t.Cleanup(func() { a.Cleanup() }) // closes the audit log
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(a.AuthApps["orders"], ","); got != "ORDERS,ORDERS-*" {
		t.Errorf("orders' apps: %q", got)
	}
	if got := strings.Join(a.AuthApps["pay"], ","); got != "PAY-*" {
		t.Errorf("the Caddyfile's binding of pay lost: %q", got)
	}
	if strings.Join(a.AuthOperators, ",") != "ops" || a.AuditLog != trail {
		t.Errorf("operators %q, audit log %q", a.AuthOperators, a.AuditLog)
	}
}
