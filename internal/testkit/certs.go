package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a private certificate authority for tests, with its certificate
// written to a PEM file.
type CA struct {
	// File is the CA certificate's PEM file.
	File string
	// Pool holds the CA certificate.
	Pool *x509.CertPool

	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

var serial atomic.Int64

// NewCA makes a CA named name, written to dir/name.pem.
func NewCA(t testing.TB, dir, name string) *CA {
	t.Helper()
	tmpl := template(name)
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	key, der, cert := newCert(t, tmpl, nil)
	ca := &CA{File: filepath.Join(dir, name+".pem"), Pool: x509.NewCertPool(), dir: dir, cert: cert, key: key}
	ca.Pool.AddCert(cert)
	writePEM(t, ca.File, "CERTIFICATE", der)
	return ca
}

// Issue makes a certificate for both server and client use, with common
// name cn, DNS names "localhost" and dnsNames, and IP addresses 127.0.0.1
// and ::1. It writes it to dir/cn.pem and its key to dir/cn-key.pem, and
// returns the two paths.
func (ca *CA) Issue(t testing.TB, cn string, dnsNames ...string) (certFile, keyFile string) {
	t.Helper()
	cert := ca.Cert(t, cn, dnsNames...)
	certFile, keyFile = filepath.Join(ca.dir, cn+".pem"), filepath.Join(ca.dir, cn+"-key.pem")
	WriteKeyPair(t, cert, certFile, keyFile)
	return certFile, keyFile
}

// Cert is Issue without the files.
func (ca *CA) Cert(t testing.TB, cn string, dnsNames ...string) tls.Certificate {
	t.Helper()
	tmpl := template(cn)
	tmpl.DNSNames = append([]string{"localhost"}, dnsNames...)
	tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	key, der, leaf := newCert(t, tmpl, ca)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// template is a certificate named cn, with a serial number of its own,
// valid from an hour ago for a day.
func template(cn string) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
}

// newCert is NewKeyCert signed by ca, or self-signed when ca is nil; it
// fails the test if that fails.
func newCert(t testing.TB, tmpl *x509.Certificate, ca *CA) (*ecdsa.PrivateKey, []byte, *x509.Certificate) {
	t.Helper()
	var parent *x509.Certificate
	var parentKey *ecdsa.PrivateKey
	if ca != nil {
		parent, parentKey = ca.cert, ca.key
	}
	key, der, cert, err := NewKeyCert(tmpl, parent, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return key, der, cert
}

// NewKeyCert makes a new P-256 key and a certificate for it from tmpl,
// signed by parent with parentKey, or by the new key itself when parent is
// nil. It returns the key, the certificate's DER bytes and the parsed
// certificate.
func NewKeyCert(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, err
	}
	return key, der, cert, nil
}

// WriteKeyPair writes cert's chain and key as PEM files.
func WriteKeyPair(t testing.TB, cert tls.Certificate, certFile, keyFile string) {
	t.Helper()
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	writePEM(t, certFile, "CERTIFICATE", cert.Certificate...)
}

func writePEM(t testing.TB, path, typ string, ders ...[]byte) {
	t.Helper()
	var out []byte
	for _, der := range ders {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})...)
	}
	// Written aside and renamed, as operators rotate files, so a reader
	// never sees half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
