package main

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// A PKCS12 key store named by server.ssl.* serves HTTPS; with
// client-auth need and a PKCS12 trust store, a client without a
// certificate is refused and one the trusted CA signed is served; a JKS
// store is refused with the command that converts it.
func TestSpringPKCS12KeyStore(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	store, trust := ca.KeyStore(t, "server", "changeit"), ca.TrustStore(t, "trustit")
	conf := springDir(t, map[string]string{"application.yml": "server:\n  address: 127.0.0.1\n  port: 0\n  ssl:\n" +
		"    key-store: " + store + "\n    key-store-type: PKCS12\n    key-store-password: changeit\n    key-alias: server\n" +
		"    client-auth: need\n    trust-store: " + trust + "\n    trust-store-password: trustit\n"})
	o, err := parseSpring(t, conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	var srv *httpapi.Server
	startAppWith(t, o, &srv)
	url := "https://" + srv.Addr().String() + "/eureka/apps"
	get := func(cert *tls.Certificate) error {
		cfg := &tls.Config{RootCAs: ca.Pool}
		if cert != nil {
			cfg.Certificates = []tls.Certificate{*cert}
		}
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		defer c.CloseIdleConnections()
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET %s: %d", url, resp.StatusCode)
			}
		}
		return err
	}
	client := ca.Cert(t, "client")
	if err := get(&client); err != nil {
		t.Errorf("a client with a certificate of the trusted CA: %v", err)
	}
	if err := get(nil); err == nil {
		t.Error("a client without a certificate was served")
	}
	if !strings.Contains(strings.Join(o.springNotes, "\n"), "server.ssl.key-alias: ignored") {
		t.Errorf("the key alias is not told: %q", o.springNotes)
	}

	jks := springDir(t, map[string]string{"application.properties": "server.ssl.key-store=keystore.jks\nserver.ssl.key-store-password=changeit\n"})
	_, err = parseSpring(t, jks, nil)
	if want := "application.properties:1: server.ssl.key-store: only PKCS12 stores are read here; convert it with keytool -importkeystore -srckeystore keystore.jks"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a JKS store: %v, want %q", err, want)
	}
}
