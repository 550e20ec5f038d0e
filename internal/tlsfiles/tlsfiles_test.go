package tlsfiles

import (
	"crypto/tls"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// serve accepts TLS connections on loopback with cfg and, for each
// completed handshake, writes the client certificate's common name (or
// "-") and closes.
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	return testkit.RawServer(t, func(c net.Conn) {
		tc := tls.Server(c, cfg)
		tc.SetDeadline(time.Now().Add(5 * time.Second))
		if tc.Handshake() == nil {
			name := "-"
			if pc := tc.ConnectionState().PeerCertificates; len(pc) > 0 {
				name = pc[0].Subject.CommonName
			}
			io.WriteString(tc, name)
		}
		tc.Close()
	}).String()
}

// dial connects with cfg and returns the server certificate's common name
// and what the server wrote.
func dial(addr string, cfg *tls.Config) (server, client string, err error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return "", "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		return "", "", err
	}
	if len(b) == 0 {
		return "", "", io.ErrUnexpectedEOF // refused after the handshake (TLS 1.3 client auth)
	}
	return c.ConnectionState().PeerCertificates[0].Subject.CommonName, string(b), nil
}

// mutual is a server that asks for client certificates, served from files
// a fresh CA issued, and a client configured from files to reach it.
type mutual struct {
	dir         string
	ca          *testkit.CA
	scert, skey string // the server's pair, CN "server"
	ccert, ckey string // the client's pair, CN "client"
	srv, cli    *tls.Config
	addr        string
}

// startMutual writes the CA "ca" and the pairs "server" and "client" to a
// temporary folder, serves with Server on loopback, and dials once with
// Client, failing the test unless each side names the other.
func startMutual(t *testing.T) *mutual {
	t.Helper()
	m := &mutual{dir: t.TempDir()}
	m.ca = testkit.NewCA(t, m.dir, "ca")
	m.scert, m.skey = m.ca.Issue(t, "server")
	m.ccert, m.ckey = m.ca.Issue(t, "client")
	var err error
	if m.srv, err = Server(Files{Cert: m.scert, Key: m.skey, CA: m.ca.File}); err != nil {
		t.Fatal(err)
	}
	m.addr = serve(t, m.srv)
	if m.cli, err = Client(Files{Cert: m.ccert, Key: m.ckey, CA: m.ca.File}); err != nil {
		t.Fatal(err)
	}
	if s, c, err := dial(m.addr, m.cli); err != nil || s != "server" || c != "client" {
		t.Fatalf("mutual TLS: server %q client %q, %v", s, c, err)
	}
	return m
}

func TestMutualTLS(t *testing.T) {
	m := startMutual(t)
	if m.srv.MinVersion != tls.VersionTLS12 {
		t.Fatalf("MinVersion = %x", m.srv.MinVersion)
	}

	// A client with no certificate is refused.
	anon, err := Client(Files{CA: m.ca.File})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dial(m.addr, anon); err == nil {
		t.Fatal("a client without a certificate got through")
	}
	// So is one whose certificate another CA signed.
	other := testkit.NewCA(t, t.TempDir(), "other")
	ocert, okey := other.Issue(t, "intruder")
	intruder, err := Client(Files{Cert: ocert, Key: okey, CA: m.ca.File})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dial(m.addr, intruder); err == nil {
		t.Fatal("a client with a certificate of another CA got through")
	}
	// A client that does not trust the server's CA refuses it.
	wrongRoots, err := Client(Files{Cert: m.ccert, Key: m.ckey, CA: other.File})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dial(m.addr, wrongRoots); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client trusting another CA: %v", err)
	}
	// TLS 1.1 is refused.
	old := m.cli.Clone()
	old.MaxVersion = tls.VersionTLS11
	if _, _, err := dial(m.addr, old); err == nil {
		t.Fatal("a TLS 1.1 client got through")
	}
}

func TestServerWithoutClientCA(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	scert, skey := ca.Issue(t, "server")
	srv, err := Server(Files{Cert: scert, Key: skey})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, srv)
	cli, err := Client(Files{CA: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	if s, c, err := dial(addr, cli); err != nil || s != "server" || c != "-" {
		t.Fatalf("server %q client %q, %v", s, c, err)
	}
}

// rotate replaces a key pair on disk with a new certificate, with a
// modification time surely different from the old one's.
func rotate(t *testing.T, ca *testkit.CA, cn, certFile, keyFile string) {
	t.Helper()
	testkit.WriteKeyPair(t, ca.Cert(t, cn), certFile, keyFile)
	later := time.Now().Add(time.Minute)
	for _, f := range []string{certFile, keyFile} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
}

// eventually dials until check passes, for up to 5 s (the files are
// checked once a second).
func eventually(t *testing.T, what string, addr string, cfg *tls.Config, check func(s, c string) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, c, err := dial(addr, cfg)
		if err == nil && check(s, c) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: server %q client %q, %v", what, s, c, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Certificates rotated on disk are taken into use without a restart, by the
// server and by the client; a half-done rotation keeps the old pair.
func TestRotation(t *testing.T) {
	m := startMutual(t)

	// Half a rotation: a new certificate whose key is not there yet.
	half := m.ca.Cert(t, "half")
	testkit.WriteKeyPair(t, half, filepath.Join(m.dir, "half.pem"), filepath.Join(m.dir, "half-key.pem"))
	data, _ := os.ReadFile(filepath.Join(m.dir, "half.pem"))
	if err := os.WriteFile(m.scert, data, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(CheckInterval + 100*time.Millisecond)
	if s, _, err := dial(m.addr, m.cli); err != nil || s != "server" {
		t.Fatalf("half-rotated: server %q, %v; want the old pair kept", s, err)
	}

	rotate(t, m.ca, "server-2", m.scert, m.skey)
	eventually(t, "server rotation", m.addr, m.cli, func(s, _ string) bool { return s == "server-2" })
	rotate(t, m.ca, "client-2", m.ccert, m.ckey)
	eventually(t, "client rotation", m.addr, m.cli, func(_, c string) bool { return c == "client-2" })

	// The client CA too: a server that now trusts another CA only refuses
	// the old clients.
	other := testkit.NewCA(t, t.TempDir(), "other")
	data, _ = os.ReadFile(other.File)
	if err := os.WriteFile(m.ca.File, data, 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Minute)
	os.Chtimes(m.ca.File, later, later)
	testkit.Eventually(t, 5*time.Second, "a client of the replaced client CA is refused", func() bool {
		_, _, err := dial(m.addr, m.cli)
		return err != nil
	})
}

func TestErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	scert, skey := ca.Issue(t, "server")
	_, okey := ca.Issue(t, "other")
	missing := filepath.Join(dir, "missing.pem")
	notPEM := filepath.Join(dir, "not.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o600)

	for _, c := range []struct {
		name string
		make func() error
		want []string
	}{
		{"missing cert", func() error { _, err := Server(Files{Cert: missing, Key: skey}); return err }, []string{"certificate file", missing}},
		{"missing key", func() error { _, err := Server(Files{Cert: scert, Key: missing}); return err }, []string{"key file", missing}},
		{"mismatched key", func() error { _, err := Server(Files{Cert: scert, Key: okey}); return err }, []string{scert, okey}},
		{"bad client CA", func() error { _, err := Server(Files{Cert: scert, Key: skey, CA: notPEM}); return err }, []string{"CA file", notPEM}},
		{"bad CA", func() error { _, err := Client(Files{CA: notPEM}); return err }, []string{"CA file", notPEM}},
		{"missing CA", func() error { _, err := Client(Files{CA: missing}); return err }, []string{"CA file", missing}},
		{"server without key", func() error { _, err := Server(Files{Cert: scert}); return err }, []string{"key file"}},
		{"client cert without key", func() error { _, err := Client(Files{Cert: scert}); return err }, []string{"key file"}},
	} {
		err := c.make()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not mention %q", c.name, err, w)
			}
		}
	}
}

// A PKCS12 key store serves in place of a PEM pair, and a PKCS12 trust
// store verifies client certificates and server certificates in place of
// a PEM CA file, as Java's keytool writes them; a wrong password names
// the store.
func TestPKCS12Stores(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	store, trust := ca.KeyStore(t, "server", "changeit"), ca.TrustStore(t, "trustit")
	srv, err := Server(Files{Cert: store, Password: "changeit", CA: trust, CAPassword: "trustit"})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, srv)
	ccert, ckey := ca.Issue(t, "client")
	cli, err := Client(Files{Cert: ccert, Key: ckey, CA: trust, CAPassword: "trustit"})
	if err != nil {
		t.Fatal(err)
	}
	if s, c, err := dial(addr, cli); err != nil || s != "server" || c != "client" {
		t.Fatalf("over the stores: server %q client %q, %v", s, c, err)
	}
	anon, err := Client(Files{CA: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dial(addr, anon); err == nil {
		t.Fatal("a client without a certificate got through")
	}
	if _, err := Server(Files{Cert: store, Password: "wrong"}); err == nil || !strings.Contains(err.Error(), store) {
		t.Errorf("a wrong password: %v", err)
	}
	if _, err := Client(Files{CA: trust, CAPassword: "wrong"}); err == nil || !strings.Contains(err.Error(), trust) {
		t.Errorf("a wrong trust store password: %v", err)
	}
}
