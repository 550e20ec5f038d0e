// Package tlsfiles builds TLS configurations from PEM files (or PKCS12
// key and trust stores, as Java keeps them) and keeps them current: when an operator replaces a certificate, key or CA file on disk,
// the next handshake after the change uses the new one, without a restart.
//
// Files are checked at handshake time, at most once a second (CheckInterval).
// A replacement that does not load (a certificate written but its key not
// yet, a half-written file) is ignored and the files in use are kept; the
// next check tries again. Every configuration requires TLS 1.2 or later and
// uses Go's default cipher suites.
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// CheckInterval is the least time between two checks of the files for
// changes.
const CheckInterval = time.Second

// Files names the files of one side of a connection: PEM, or PKCS12
// stores.
type Files struct {
	// Cert is the certificate chain, leaf first, and Key its private key.
	// A server needs both. A client presents them to servers that ask for
	// a client certificate (mutual TLS); without them it presents none.
	// A Cert named .p12 or .pfx, or given a Password, without Key, is a
	// PKCS12 key store holding the chain and the key, opened with
	// Password.
	Cert, Key, Password string
	// CA holds the certificates of the authorities to trust. For a server
	// it is the client CA: when set, every client must present a
	// certificate it signed (mutual TLS); when empty, none is asked for.
	// For a client it is what server certificates must chain to; when
	// empty, the system's roots are trusted. A client reads it once, when
	// the configuration is made; a server re-reads it as it does its
	// certificate. A CA file named .p12 or .pfx, or given a CAPassword, is
	// a PKCS12 trust store (Java's), opened with CAPassword.
	CA, CAPassword string
	// ServerName, for a client, is the name server certificates must be
	// valid for. Default: the host of the URL connected to.
	ServerName string
}

// Server returns a server configuration for f: it presents f.Cert and, if
// f.CA is set, requires and verifies client certificates against it. It
// loads the files now and returns an error naming the file that does not
// load.
func Server(f Files) (*tls.Config, error) {
	if f.Cert == "" || (f.Key == "" && !IsStore(f.Cert, f.Password)) {
		return nil, errors.New("tlsfiles: a server needs both a certificate file and a key file, or a key store")
	}
	w := &watched{files: f, server: true}
	if err := w.load(); err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return w.current().server, nil
		},
	}, nil
}

// Client returns a client configuration for f: it trusts f.CA (or the
// system's roots) and presents f.Cert when a server asks for a client
// certificate. It loads the files now and returns an error naming the file
// that does not load.
func Client(f Files) (*tls.Config, error) {
	if (f.Cert == "") != (f.Key == "") && (f.Key != "" || !IsStore(f.Cert, f.Password)) {
		return nil, errors.New("tlsfiles: a client certificate needs both a certificate file and a key file, or a key store")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: f.ServerName}
	if f.CA != "" {
		pool, err := loadPool(f.CA, f.CAPassword)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if f.Cert != "" {
		w := &watched{files: f}
		if err := w.load(); err != nil {
			return nil, err
		}
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return w.current().cert, nil
		}
	}
	return cfg, nil
}

// watched is the loaded state of a set of files, reloaded when they change.
type watched struct {
	files  Files
	server bool // a server's: builds its configuration, with the client CA

	mu      sync.Mutex
	checked time.Time // last check for changes
	stamps  [3]stamp  // cert, key, CA, as loaded
	state   *loaded   // what handshakes use
	now     func() time.Time
}

type stamp struct {
	mod  time.Time
	size int64
}

type loaded struct {
	cert   *tls.Certificate
	server *tls.Config // for Server: the configuration handshakes get
}

func (w *watched) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}

// current returns the state to use, reloading the files first if a check
// is due and they changed. A reload that fails keeps the state in use.
func (w *watched) current() *loaded {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock()
	if now.Sub(w.checked) < CheckInterval {
		return w.state
	}
	w.checked = now
	if stamps := w.stat(); stamps != w.stamps {
		_ = w.loadLocked() // on failure, keep the files in use and try again at the next check
	}
	return w.state
}

func (w *watched) paths() [3]string {
	ca := ""
	if w.server {
		ca = w.files.CA
	}
	return [3]string{w.files.Cert, w.files.Key, ca}
}

func (w *watched) stat() (s [3]stamp) {
	for n, p := range w.paths() {
		if p == "" {
			continue
		}
		if fi, err := os.Stat(p); err == nil {
			s[n] = stamp{fi.ModTime(), fi.Size()}
		}
	}
	return s
}

func (w *watched) load() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checked = w.clock()
	return w.loadLocked()
}

func (w *watched) loadLocked() error {
	stamps := w.stat() // before reading: a change during the read is seen next time
	cert, err := w.certificate()
	if err != nil {
		return err
	}
	st := &loaded{cert: &cert}
	if w.server {
		st.server = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
		if w.files.CA != "" {
			pool, err := loadPool(w.files.CA, w.files.CAPassword)
			if err != nil {
				return err
			}
			st.server.ClientCAs = pool
			st.server.ClientAuth = tls.RequireAndVerifyClientCert
		}
	}
	w.state, w.stamps = st, stamps
	return nil
}

// readFile reads a PEM file, naming it and what it should hold in errors.
func readFile(what, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tlsfiles: reading %s file: %w", what, err)
	}
	return data, nil
}

// certificate loads the certificate and its key: a PEM pair, or a
// PKCS12 key store.
func (w *watched) certificate() (tls.Certificate, error) {
	f := w.files
	if f.Key == "" {
		return keyStore(f.Cert, f.Password)
	}
	certPEM, err := readFile("certificate", f.Cert)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := readFile("key", f.Key)
	if err != nil {
		return tls.Certificate{}, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlsfiles: certificate file %s with key file %s: %w", f.Cert, f.Key, err)
	}
	return cert, nil
}

// keyStore loads a PKCS12 key store's key and certificate chain.
func keyStore(path, password string) (tls.Certificate, error) {
	data, err := readFile("key store", path)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, leaf, cas, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlsfiles: key store %s (PKCS12): %w", path, err)
	}
	cert := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
	for _, ca := range cas {
		cert.Certificate = append(cert.Certificate, ca.Raw)
	}
	return cert, nil
}

// IsStore reports whether a file is a PKCS12 store: named .p12 or .pfx,
// or given a password. It is the one detection: the files here and the
// flags of cmd/eureka that tell a key store from a PEM pair read it.
func IsStore(path, password string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".p12" || ext == ".pfx" || password != ""
}

// loadPool reads a file of PEM CA certificates, or a PKCS12 trust store
// (named .p12 or .pfx, or given a password).
func loadPool(path, password string) (*x509.CertPool, error) {
	data, err := readFile("CA", path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if IsStore(path, password) {
		certs, err := pkcs12.DecodeTrustStore(data, password)
		if err != nil {
			return nil, fmt.Errorf("tlsfiles: trust store %s (PKCS12): %w", path, err)
		}
		for _, c := range certs {
			pool.AddCert(c)
		}
		return pool, nil
	}
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("tlsfiles: CA file %s holds no PEM certificate", path)
	}
	return pool, nil
}
