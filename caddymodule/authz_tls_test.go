package caddymodule

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// In Caddy over mutual TLS (the site's client_auth), auth_apps
// cert:<name> binds a client certificate to an app: it writes PAYMENTS
// instances, with no password, and gets 403 on ORDERS.
func TestCertificateBindingInCaddy(t *testing.T) {
	dir := t.TempDir()
	trail := filepath.Join(dir, "audit.log")
	client := mutualTLSRegistry(t, dir, "authz-tls", "auth_apps cert:svc-payments PAYMENTS\n\t\taudit_log "+trail, "", "svc-payments")
	base := "https://localhost:" + httpsPort + "/eureka/apps/"
	send := func(method, path string, body []byte) int {
		t.Helper()
		return sendWith(t, client, "", method, base+path, body)
	}
	testkit.Eventually(t, 5*time.Second, "the config to load", func() bool {
		return send("POST", "PAYMENTS", eureka.AppendInstanceJSON(nil, testkit.SpringInst("PAYMENTS", "p1"))) == http.StatusNoContent
	})
	if got := send("PUT", "PAYMENTS/p1/status?value=OUT_OF_SERVICE", nil); got != 200 {
		t.Errorf("the bound certificate overrides its app: %d", got)
	}
	if got := send("POST", "ORDERS", eureka.AppendInstanceJSON(nil, testkit.SpringInst("ORDERS", "o1"))); got != 403 {
		t.Errorf("the bound certificate registers as ORDERS: %d, want 403", got)
	}
	want := `"cert":"svc-payments","source":"127.0.0.1","action":"register","app":"ORDERS","outcome":"refused","status":403}`
	testkit.Eventually(t, 5*time.Second, "the refusal in the audit trail", func() bool {
		raw, _ := os.ReadFile(trail)
		return bytes.Contains(raw, []byte(want))
	})
}

// mutualTLSRegistry loads a registry with the eureka app's options opts
// at https://localhost:<httpsPort>, its site asking for client
// certificates of a new CA (body after its tls directive), and returns
// a client showing a certificate named client.
func mutualTLSRegistry(t *testing.T, dir, name, opts, body, client string) *http.Client {
	ca := testkit.NewCA(t, dir, "ca")
	cert, key := ca.Issue(t, "registry")
	tlsBody := fmt.Sprintf("\ttls %s %s {\n\t\tclient_auth {\n\t\t\tmode require_and_verify\n\t\t\ttrust_pool file %s\n\t\t}\n\t}\n%s\n\teureka_server", cert, key, ca.File, body)
	// localhost, not 127.0.0.1: with client_auth, Caddy answers 421 to a
	// request whose Host is not the name the TLS handshake gave (SNI),
	// and a client sends no SNI for an address.
	site := fmt.Sprintf("https://localhost:%s {\n\tbind 127.0.0.1\n%s\n}\n", httpsPort, tlsBody)
	caddytest.NewTester(t).InitServer(testConfig("", "registry "+newRegistry(name)+"\n\t\t"+opts, site), "caddyfile")
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{ca.Cert(t, client)}}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}
}

// sendWith sends a write with client (as user with the password pw, if
// user is set) and returns its status, logging a refusal's body.
func sendWith(t *testing.T, client *http.Client, user, method, url string, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if user != "" {
		req.SetBasicAuth(user, "pw")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Log(err)
		return 0
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Logf("%s %s as %q: %d %s", method, url, user, resp.StatusCode, b)
	}
	return resp.StatusCode
}
