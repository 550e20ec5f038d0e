package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hudl/fargo"
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/apisuite"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// startNode runs the server with args until the test ends.
func startNode(t *testing.T, args ...string) (*httpapi.Server, *registry.Store) {
	t.Helper()
	var srv *httpapi.Server
	var store *registry.Store
	startApp(t, args, &srv, &store)
	return srv, store
}

// startApp runs the assembled application with args until the test ends
// (stopping it then must succeed), first filling targets, pointers as
// fx.Populate takes them, from it.
func startApp(t *testing.T, args []string, targets ...any) {
	t.Helper()
	o, err := parseOptions(args, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	startAppWith(t, o, targets...)
}

// startAppWith is startApp with the settings parsed already.
func startAppWith(t *testing.T, o *options, targets ...any) {
	t.Helper()
	app := fx.New(appOptions(o, zap.NewNop()), fx.Populate(targets...))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.StopOnCleanupChecked(t, 10*time.Second, app.Stop)
}

func TestTLSFlagErrors(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	cert, key := ca.Issue(t, "node")
	missing := filepath.Join(dir, "missing.pem")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-tls-cert", cert}, "-tls-key"},
		{[]string{"-tls-client-ca", ca.File}, "-tls-cert"},
		{[]string{"-tls-cert", cert, "-tls-key", key, "-peer-cert-names", "node"}, "-tls-client-ca"},
		{[]string{"-tls-cert", missing, "-tls-key", key}, missing},
		{[]string{"-tls-cert", cert, "-tls-key", key, "-tls-client-ca", missing}, missing},
		{[]string{"-tls-ca", missing}, missing},
	} {
		_, err := parseOptions(c.args, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error mentioning %q", c.args, err, c.want)
		}
	}
	o, err := parseOptions(nil, envOf(map[string]string{"EUREKA_TLS_CERT": cert, "EUREKA_TLS_KEY": key, "EUREKA_TLS_CLIENT_CA": ca.File, "EUREKA_PEER_CERT_NAMES": "a, b"}), io.Discard)
	if err != nil || o.server.TLS == nil || o.registry.Peers.TLS == nil || len(o.registry.API.Auth.PeerCertNames) != 2 {
		t.Fatalf("from the environment: %+v, %v", o, err)
	}
}

// startHTTPSPair starts two nodes, node-1 and node-2, peering over
// HTTPS on loopback, each serving a certificate of ca, with the flags
// extra; it returns their addresses and Stores.
func startHTTPSPair(t *testing.T, ca *testkit.CA, extra ...string) ([]string, []*registry.Store) {
	t.Helper()
	addrs := []string{testkit.FreeAddr(t), testkit.FreeAddr(t)}
	peers := "https://" + addrs[0] + "/eureka/,https://" + addrs[1] + "/eureka/"
	var stores []*registry.Store
	for n, name := range []string{"node-1", "node-2"} {
		cert, key := ca.Issue(t, name)
		args := append([]string{"-addr", addrs[n], "-dashboard-path", "off", "-tls-cert", cert, "-tls-key", key, "-peers", peers}, extra...)
		_, st := startNode(t, args...)
		stores = append(stores, st)
	}
	return addrs, stores
}

// Two nodes replicate over mutual TLS, each authenticating the other by its
// certificate; a client without a certificate of the client CA is refused.
func TestMutualTLSCluster(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	hash, err := httpapi.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	addrs, stores := startHTTPSPair(t, ca, "-tls-client-ca", ca.File, "-tls-ca", ca.File,
		"-peer-cert-names", "node-1,node-2", "-auth-users", "ops:"+hash)

	app := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: ca.Pool, Certificates: []tls.Certificate{ca.Cert(t, "orders")}}}}
	defer app.CloseIdleConnections()
	req, _ := http.NewRequest("POST", "https://"+addrs[0]+"/eureka/apps/ORDERS", bytes.NewReader(eureka.AppendInstanceJSON(nil, testkit.Inst("ORDERS", "o1"))))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("ops", "s3cret")
	resp, err := app.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("register: %d", resp.StatusCode)
	}
	testkit.Eventually(t, 5*time.Second, "replication over mutual TLS", func() bool { _, ok := stores[1].Get("ORDERS", "o1"); return ok })

	anon := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}}
	if resp, err := anon.Get("https://" + addrs[1] + "/eureka/apps"); err == nil {
		resp.Body.Close()
		t.Fatalf("a client without a certificate got %d", resp.StatusCode)
	}
}

// hudl/fargo registers, reads, heartbeats and cancels over HTTPS against
// the standalone server, trusting the test CA.
func TestFargoOverHTTPS(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	cert, key := ca.Issue(t, "server")
	tr := fargo.HttpClient.Transport.(*http.Transport)
	old := tr.TLSClientConfig
	tr.TLSClientConfig = &tls.Config{RootCAs: ca.Pool}
	t.Cleanup(func() { tr.CloseIdleConnections(); tr.TLSClientConfig = old })
	apisuite.RunFargo(t, func(t *testing.T, _ registry.Config, _ httpapi.APIConfig) (string, *registry.Store) {
		srv, st := startNode(t, "-addr", "127.0.0.1:0", "-dashboard-path", "off", "-tls-cert", cert, "-tls-key", key)
		t.Cleanup(tr.CloseIdleConnections)
		return "https://" + srv.Addr().String(), st
	})
}

// -tls-ca takes a PKCS12 trust store with -tls-ca-password, as
// -tls-client-ca does: two nodes replicate over HTTPS trusting it. The
// password without -tls-ca, or a wrong one, stops the start.
func TestPKCS12TrustStoreForThePeers(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	trust := ca.TrustStore(t, "trustit")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-tls-ca-password", "trustit"}, "-tls-ca-password is set without -tls-ca"},
		{[]string{"-tls-ca", trust, "-tls-ca-password", "wrong"}, trust},
	} {
		if _, err := parseOptions(c.args, noEnv, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error mentioning %q", c.args, err, c.want)
		}
	}

	_, stores := startHTTPSPair(t, ca, "-tls-ca", trust, "-tls-ca-password", "trustit")
	testkit.MustRegister(t, stores[0], testkit.Inst("ORDERS", "o1"), false)
	testkit.Eventually(t, 5*time.Second, "replication over HTTPS trusting the PKCS12 store", func() bool { _, ok := stores[1].Get("ORDERS", "o1"); return ok })
}
