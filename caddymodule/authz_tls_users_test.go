package caddymodule

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// A certificate binding (auth_apps cert:<name>) beside users of Caddy's
// basic_auth: the users keep their own rights, a bound user its apps and
// an unbound one every app, whatever certificate their client shows; the
// certificate binding does not turn the API's own password check on,
// which knows none of Caddy's users (it answered them 401).
func TestCertificateAndUserBindingsInCaddy(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	cert, key := ca.Issue(t, "registry")
	hash := testkit.PasswordHash(t, "pw")
	body := fmt.Sprintf("\ttls %s %s {\n\t\tclient_auth {\n\t\t\tmode require_and_verify\n\t\t\ttrust_pool file %s\n\t\t}\n\t}\n"+
		"\t@writes not method GET HEAD\n\tbasic_auth @writes {\n\t\tord %s\n\t\tfree %s\n\t}\n\teureka_server", cert, key, ca.File, hash, hash)
	site := fmt.Sprintf("https://localhost:%s {\n\tbind 127.0.0.1\n%s\n}\n", httpsPort, body)
	caddytest.NewTester(t).InitServer(testConfig("", "registry "+newRegistry("authz-tls-users")+
		"\n\t\tauth_apps cert:svc-payments PAYMENTS\n\t\tauth_apps ord ORDERS", site), "caddyfile")
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{ca.Cert(t, "svc-other")}}}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	base := "https://localhost:" + httpsPort + "/eureka/apps/"
	send := func(user, method, path string, body []byte) int {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(user, "pw")
		resp, err := client.Do(req)
		if err != nil {
			t.Log(err)
			return 0
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Logf("%s %s as %s: %d %s", method, path, user, resp.StatusCode, b)
		}
		return resp.StatusCode
	}
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
		if got := send(c.user, c.method, c.path, body); got != c.want {
			t.Errorf("%s %s as %s: %d, want %d", c.method, c.path, c.user, got, c.want)
		}
	}
}
