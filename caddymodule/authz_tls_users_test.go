package caddymodule

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// A certificate binding (auth_apps cert:<name>) beside users of Caddy's
// basic_auth: the users keep their own rights, a bound user its apps and
// an unbound one every app, whatever certificate their client shows; the
// certificate binding does not turn the API's own password check on,
// which knows none of Caddy's users (it answered them 401).
func TestCertificateAndUserBindingsInCaddy(t *testing.T) {
	hash := testkit.PasswordHash(t, "pw")
	client := mutualTLSRegistry(t, t.TempDir(), "authz-tls-users", "auth_apps cert:svc-payments PAYMENTS\n\t\tauth_apps ord ORDERS",
		fmt.Sprintf("\t@writes not method GET HEAD\n\tbasic_auth @writes {\n\t\tord %s\n\t\tfree %s\n\t}", hash, hash), "svc-other")
	base := "https://localhost:" + httpsPort + "/eureka/apps/"
	testkit.Eventually(t, 5*time.Second, "the config to load", func() bool {
		return testkit.StatusAs(t, "GET", "http://127.0.0.1:"+adminPort+"/config/", "", "", "") == http.StatusOK
	})
	for _, c := range []struct {
		user, method, path, app string
		want                    int
	}{
		{"ord", "POST", "ORDERS", "ORDERS", 204},
		{"ord", "PUT", "ORDERS/i1/status?value=OUT_OF_SERVICE", "", 200},
		{"ord", "POST", "PAYMENTS", "PAYMENTS", 403},
		{"free", "POST", "PAYMENTS", "PAYMENTS", 204},
		{"free", "PUT", "ORDERS/i1/status?value=UP", "", 200},
	} {
		var body []byte
		if c.app != "" {
			body = eureka.AppendInstanceJSON(nil, testkit.SpringInst(c.app, "i1"))
		}
		if got := sendWith(t, client, c.user, c.method, base+c.path, body); got != c.want {
			t.Errorf("%s %s as %s: %d, want %d", c.method, c.path, c.user, got, c.want)
		}
	}
}
