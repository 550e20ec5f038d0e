package gatewaysuite

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// suitePKI is the suite's certificate authority and the one leaf it
// signs, for 127.0.0.1, that every TLS instance serves. Both are made once
// per process and kept in memory only.
var suitePKI = sync.OnceValues(func() (*pkiPair, error) {
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gatewaysuite CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caKey, caDER, ca, err := testkit.NewKeyCert(caTmpl, nil, nil)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	key, der, leaf, err := testkit.NewKeyCert(tmpl, ca, caKey)
	if err != nil {
		return nil, err
	}
	return &pkiPair{
		caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		leaf:  tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
	}, nil
})

type pkiPair struct {
	caPEM []byte
	leaf  tls.Certificate
}

func pki(t *testing.T) *pkiPair {
	t.Helper()
	p, err := suitePKI()
	if err != nil {
		t.Fatalf("the suite's certificates: %v", err)
	}
	return p
}

// TrustedCA returns a PEM file (in t.TempDir()) of the certificate
// authority that signs the suite's TLS instances; the gateway trusts it
// for instances reached on their secure port. The authority is the same
// for the whole process.
func TrustedCA(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gatewaysuite-ca.pem")
	if err := os.WriteFile(path, pki(t).caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// newTLSBackend is newBackend serving HTTPS, with a certificate for
// 127.0.0.1 that the suite's CA signs; configure edits its server before
// it starts.
func newTLSBackend(t *testing.T, name string, handler http.Handler, configure ...func(*http.Server)) *backend {
	t.Helper()
	if handler == nil {
		handler = echoHandler(name)
	}
	srv := httptest.NewUnstartedServer(handler)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki(t).leaf}, MinVersion: tls.VersionTLS12}
	for _, c := range configure { // before it serves: its goroutines read the config
		c(srv.Config)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &backend{name: name, srv: srv, port: srv.Listener.Addr().(*net.TCPAddr).Port}
}
