package httpapi

import (
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/internal/tlsfiles"
	"github.com/eurekagate/eurekagate/registry"
)

// Over mutual TLS, through both front doors, a client certificate bound
// to PAYMENTS (CertApps, by its DNS name) is a credential of its own: it
// registers and overrides PAYMENTS instances without a password, and
// gets 403 on ORDERS; a certificate of the same CA that is not bound has
// no rights of its own (401 without a password); with the host's own
// authentication (ExternalUsers, Caddy's), the bound certificate is
// recognised just the same.
func TestCertificateBoundToAnApp(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	cert, key := ca.Issue(t, "server")
	serverTLS, err := tlsfiles.Server(tlsfiles.Files{Cert: cert, Key: key, CA: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	for _, external := range []bool{false, true} {
		auth := AuthConfig{CertApps: map[string][]string{"payments.svc.internal": {"PAYMENTS"}}}
		if external {
			auth.ExternalUsers = true
		} else {
			auth.Users = []Account{account(t, "ops", "s3cret")}
		}
		doors := tlsDoors(t, serverTLS)
		for name, start := range doors {
			if external && name == "fasthttp" {
				continue // a host's own authentication is net/http's (Caddy)
			}
			s, _ := newTestStore(t, registry.Config{})
			mustRegister(t, s, inst("ORDERS", "o1"), false)
			base := start(NewAPI(s, APIConfig{Auth: auth})) + "/eureka/apps/"
			client := func(cn string, dns ...string) *http.Client {
				tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{ca.Cert(t, cn, dns...)}}}
				t.Cleanup(tr.CloseIdleConnections)
				return &http.Client{Transport: tr, Timeout: 5 * time.Second}
			}
			payments, other := client("payments-1", "payments.svc.internal"), client("someone")
			for _, c := range []struct {
				client       *http.Client
				method, path string
				body         []byte
				want         int
			}{
				{payments, "POST", "PAYMENTS", eureka.AppendInstanceJSON(nil, testkit.SpringInst("PAYMENTS", "p1")), 204},
				{payments, "PUT", "PAYMENTS/p1/status?value=OUT_OF_SERVICE", nil, 200},
				{payments, "POST", "ORDERS", eureka.AppendInstanceJSON(nil, testkit.SpringInst("ORDERS", "o2")), 403},
				{payments, "DELETE", "ORDERS/o1", nil, 403},
			} {
				if got, err := tlsCall(c.client, c.method, base+c.path, c.body, "", false); err != nil || got != c.want {
					t.Errorf("%s external=%v: %s %s: %d %v, want %d", name, external, c.method, c.path, got, err, c.want)
				}
			}
			if !external {
				if got, _ := tlsCall(other, "DELETE", base+"ORDERS/o1", nil, "", false); got != 401 {
					t.Errorf("%s: a certificate not bound, without a password: %d, want 401", name, got)
				}
			}
			if _, ok := s.Get("ORDERS", "o1"); !ok {
				t.Errorf("%s external=%v: a refused cancel took", name, external)
			}
			if p, ok := s.Get("PAYMENTS", "p1"); !ok || p.Status != eureka.StatusOutOfService {
				t.Errorf("%s external=%v: the bound certificate's writes did not take", name, external)
			}
		}
	}
}
