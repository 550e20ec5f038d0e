package testkit

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"software.sslmate.com/src/go-pkcs12"
)

// KeyStore issues a certificate as Issue does and writes it with its key
// and the CA's certificate to dir/cn.p12, a PKCS12 key store as Java's
// keytool writes one (AES-256 and PBKDF2), opened with password; it
// returns the path.
func (ca *CA) KeyStore(t testing.TB, cn, password string) string {
	t.Helper()
	cert := ca.Cert(t, cn)
	data, err := pkcs12.Modern.Encode(cert.PrivateKey, cert.Leaf, []*x509.Certificate{ca.cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	return writeStore(t, filepath.Join(ca.dir, cn+".p12"), data)
}

// TrustStore writes the CA's certificate to dir/<name>-trust.p12, a
// PKCS12 trust store as Java's keytool writes one, opened with password;
// it returns the path.
func (ca *CA) TrustStore(t testing.TB, password string) string {
	t.Helper()
	data, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	return writeStore(t, filepath.Join(ca.dir, filepath.Base(ca.File[:len(ca.File)-len(".pem")])+"-trust.p12"), data)
}

func writeStore(t testing.TB, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
