package discovery

import (
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/registrytest"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// startTLSServer starts our server over mutual TLS with a private CA.
func startTLSServer(t *testing.T, ca *testkit.CA) (*registry.Store, string) {
	t.Helper()
	cert, key := ca.Issue(t, "eureka")
	cfg, err := httpapi.TLSFiles(cert, key, ca.File)
	if err != nil {
		t.Fatal(err)
	}
	store := registry.New(registry.Config{})
	s := registrytest.Start(t, store, httpapi.ServerConfig{Addr: "127.0.0.1:0", TLS: cfg})
	return store, "https://" + s.Addr + "/eureka/"
}

// The client registers, heartbeats, fetches and watches over HTTPS with a
// private CA and a client certificate.
func TestHTTPSWithPrivateCA(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	store, url := startTLSServer(t, ca)
	cert, key := ca.Issue(t, "orders")
	tlsCfg, err := TLSFiles(ca.File, cert, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{
		ServiceURLs: []string{url}, TLS: tlsCfg, RegistryFetchInterval: 50 * time.Millisecond,
		Instance: &InstanceConfig{AppName: "orders", HostName: "127.0.0.1", Port: 7070, LeaseRenewalInterval: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	defer stopClient(t, c)
	const id = "127.0.0.1:orders:7070"
	testkit.Eventually(t, 5*time.Second, "registration over HTTPS", func() bool { _, ok := store.Get("ORDERS", id); return ok })
	<-c.Ready()
	testkit.Eventually(t, 5*time.Second, "own instance fetched over HTTPS", func() bool { return len(c.Instances("ORDERS")) == 1 })
	testkit.MustRegister(t, store, testkit.Inst("PAYMENTS", "p1"), false)
	testkit.Eventually(t, 5*time.Second, "a change watched over HTTPS", func() bool { return len(c.Instances("PAYMENTS")) == 1 })
}

// A failed handshake is reported with the URL and the reason.
func TestHTTPSHandshakeErrors(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	_, url := startTLSServer(t, ca)
	cert, key := ca.Issue(t, "orders")

	other := testkit.NewCA(t, t.TempDir(), "other")
	wrongCA, err := TLSFiles(other.File, cert, key)
	if err != nil {
		t.Fatal(err)
	}
	noCert, err := TLSFiles(ca.File, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"untrusted server", Config{ServiceURLs: []string{url}, TLS: wrongCA}, "not signed by a CA this client trusts"},
		{"no client certificate", Config{ServiceURLs: []string{url}, TLS: noCert}, "TLS handshake failed"},
		{"plain HTTP to HTTPS", Config{ServiceURLs: []string{strings.Replace(url, "https:", "http:", 1)}}, ""},
	} {
		cl, err := New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = cl.Refresh()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), strings.TrimSuffix(strings.TrimPrefix(url, "https://"), "/eureka/")) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want the URL and %q", c.name, err, c.want)
		}
		t.Logf("%s: %v", c.name, err)
	}
}
