package httpapi

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/internal/tlsfiles"
	"github.com/eurekagate/eurekagate/registry"
)

// tlsClient is an HTTPS client trusting ca, presenting cn's certificate
// unless cn is "".
func tlsClient(t *testing.T, ca *testkit.CA, cn string) *http.Client {
	cfg := &tls.Config{RootCAs: ca.Pool}
	if cn != "" {
		cfg.Certificates = []tls.Certificate{ca.Cert(t, cn)}
	}
	tr := &http.Transport{TLSClientConfig: cfg}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}
}

func tlsCall(c *http.Client, method, url string, body []byte, basic string, replicated bool) (int, error) {
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if basic != "" {
		req.SetBasicAuth(basic, "s3cret")
	}
	if replicated {
		req.Header.Set("x-netflix-discovery-replication", "true")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Over mutual TLS, through both front doors: a client without a certificate
// of the client CA is refused at the handshake; a certificate whose name is
// in PeerCertNames is the peer and may replicate; another is not, and needs
// a password to write.
func TestMutualTLSAndPeerCertificates(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	cert, key := ca.Issue(t, "server")
	serverTLS, err := tlsfiles.Server(tlsfiles.Files{Cert: cert, Key: key, CA: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	auth := AuthConfig{Users: []Account{account(t, "ops", "s3cret")}, PeerCertNames: []string{"node-1", "node-2.eureka.internal"}}

	doors := tlsDoors(t, serverTLS)
	for name, start := range doors {
		t.Run(name, func(t *testing.T) {
			s, _ := newTestStore(t, registry.Config{})
			base := start(NewAPI(s, APIConfig{Auth: auth})) + "/eureka/"
			body := eureka.AppendInstanceJSON(nil, inst("A", "x"))

			if _, err := tlsCall(tlsClient(t, ca, ""), "GET", base+"apps", nil, "", false); err == nil {
				t.Fatal("a client without a certificate got an answer")
			}
			other := testkit.NewCA(t, t.TempDir(), "other")
			intruder := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
				RootCAs: ca.Pool, Certificates: []tls.Certificate{other.Cert(t, "node-1")}}}}
			if _, err := tlsCall(intruder, "POST", base+"apps/A", body, "", true); err == nil {
				t.Fatal("a peer name on a certificate of another CA got an answer")
			}

			user := tlsClient(t, ca, "someone")
			if st, err := tlsCall(user, "GET", base+"apps", nil, "", false); err != nil || st != 200 {
				t.Fatalf("read with a client certificate: %d %v", st, err)
			}
			if st, _ := tlsCall(user, "POST", base+"apps/A", body, "", true); st != 401 {
				t.Fatalf("replication from a non-peer certificate: %d", st)
			}
			if st, _ := tlsCall(user, "POST", base+"apps/A", body, "ops", true); st != 401 {
				t.Fatalf("replication with a user's password: %d", st)
			}
			if s.Len() != 0 {
				t.Fatal("a refused write changed the registry")
			}
			if st, _ := tlsCall(user, "POST", base+"apps/A", body, "ops", false); st != 204 {
				t.Fatalf("write with a user's password: %d", st)
			}
			for _, peer := range []string{"node-1", "node-2"} {
				cn := peer
				c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}}
				// node-2 is known by its DNS name, not its common name.
				crt := ca.Cert(t, cn+"-cn", cn+".eureka.internal")
				if cn == "node-1" {
					crt = ca.Cert(t, cn)
				}
				c.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{crt}
				b := eureka.AppendInstanceJSON(nil, inst("B", cn))
				if st, err := tlsCall(c, "POST", base+"apps/B", b, "", true); err != nil || st != 204 {
					t.Fatalf("replication from peer %s: %d %v", cn, st, err)
				}
				c.CloseIdleConnections()
			}
			if s.Len() != 3 {
				t.Fatalf("%d instances registered, want 3", s.Len())
			}
		})
	}
}

// tlsDoors starts api over TLS through each front door on loopback, by
// name, returning its base URL: the fasthttp Server and net/http's.
func tlsDoors(t *testing.T, serverTLS *tls.Config) map[string]func(api *API) string {
	return map[string]func(api *API) string{
		"fasthttp": func(api *API) string {
			srv := NewServer(api, ServerConfig{Addr: "127.0.0.1:0", TLS: serverTLS})
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Stop(t.Context()) })
			return "https://" + srv.Addr().String()
		},
		"net/http": func(api *API) string {
			srv := httptest.NewUnstartedServer(NewHTTPHandler(api))
			srv.TLS = serverTLS
			srv.StartTLS()
			t.Cleanup(srv.Close)
			return srv.URL
		},
	}
}
