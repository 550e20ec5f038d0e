package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// The README's openssl commands make a CA and three node certificates with
// which three nodes on loopback replicate over mutual TLS.
func TestREADMEMutualTLSCluster(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "<!-- tls-cluster-certs -->\n```sh\n")
	script, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatal("README: no sh block after the tls-cluster-certs marker")
	}
	dir := t.TempDir()
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's openssl commands: %v\n%s", err, out)
	}
	file := func(name string) string { return filepath.Join(dir, name) }

	addrs := []string{testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t)}
	var peers []string
	for _, a := range addrs {
		peers = append(peers, "https://"+a+"/eureka/")
	}
	var stores []*registry.Store
	for n, name := range []string{"eureka-1", "eureka-2", "eureka-3"} {
		_, st := startNode(t, "-addr", addrs[n], "-dashboard-path", "off",
			"-tls-cert", file(name+".pem"), "-tls-key", file(name+"-key.pem"),
			"-tls-client-ca", file("ca.pem"), "-tls-ca", file("ca.pem"),
			"-peer-cert-names", "eureka-1,eureka-2,eureka-3",
			"-peers", strings.Join(peers, ","))
		stores = append(stores, st)
	}

	// A node's certificate is the peer credential: a write sent as
	// replication with eureka-2's certificate is accepted by eureka-1 ...
	caPEM, _ := os.ReadFile(file("ca.pem"))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(file("eureka-2.pem"), file("eureka-2-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}}
	defer c.CloseIdleConnections()
	req, _ := http.NewRequest("POST", peers[0]+"apps/ORDERS", bytes.NewReader(eureka.AppendInstanceJSON(nil, testkit.Inst("ORDERS", "o1"))))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("register with a node certificate: %d", resp.StatusCode)
	}
	// ... and replicated by eureka-1 to the other two over mutual TLS.
	testkit.Eventually(t, 5*time.Second, "replication to all three nodes", func() bool {
		for _, st := range stores {
			if _, ok := st.Get("ORDERS", "o1"); !ok {
				return false
			}
		}
		return true
	})
}
