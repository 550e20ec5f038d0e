package interop

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// peerAwareYML is the Spring Cloud docs' "Two Peer Aware Eureka Servers"
// with the hostnames peer1 and peer2 as 127.0.0.2 and 127.0.0.3 and a
// port, and a base document that puts each node on its own address.
const peerAwareYML = `server:
  port: %[1]d
  address: ${eureka.instance.hostname}
---
spring:
  profiles: peer1
eureka:
  instance:
    hostname: 127.0.0.2
  client:
    serviceUrl:
      defaultZone: http://127.0.0.3:%[1]d/eureka/
---
spring:
  profiles: peer2
eureka:
  instance:
    hostname: 127.0.0.3
  client:
    serviceUrl:
      defaultZone: http://127.0.0.2:%[1]d/eureka/
`

// standaloneYML is the Spring Cloud docs' "Standalone Eureka Server",
// with a free port for 8761.
const standaloneYML = `server:
  port: %d

eureka:
  instance:
    hostname: localhost
  client:
    registerWithEureka: false
    fetchRegistry: false
    serviceUrl:
      defaultZone: http://${eureka.instance.hostname}:${server.port}/eureka/
`

// Our server started with no flag at all in a directory holding only the
// docs' standalone application.yml: the Spring Boot client of each line
// registers, renews, and is read back.
func TestSpringStandaloneConfig(t *testing.T) {
	requireJava(t)
	dir := t.TempDir()
	port := freePort(t, "127.0.0.1")
	if err := os.WriteFile(filepath.Join(dir, "application.yml"), []byte(fmt.Sprintf(standaloneYML, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startIn(t, "ours, standalone", dir, goBinary(t, "cmd/eureka"))
	srv.await(`"registry listening"`, 30*time.Second)
	base := fmt.Sprintf("http://localhost:%d", port)
	for _, line := range springLines {
		t.Run(line.name, func(t *testing.T) {
			id := "standalone-" + line.name
			startSpringClientOf(t, line.project, "orders", id, base+"/eureka/")
			first := int64(0)
			eventually(t, 10*time.Second, id+" UP", func() (bool, string) {
				ts, got := lastRenewal(t, base, "ORDERS", id)
				first = ts
				return ts > 0, got
			})
			eventually(t, 10*time.Second, "a renewal of "+id, func() (bool, string) {
				ts, got := lastRenewal(t, base, "ORDERS", id)
				return ts > first, got
			})
		})
	}
}

// lastRenewal reads an instance's lastRenewalTimestamp from a node, 0
// when the node does not hold it UP.
func lastRenewal(t *testing.T, node, app, id string) (int64, string) {
	status, body, err := tryCall("GET", node+"/eureka/apps/"+app+"/"+id, nil, "Accept", "application/json")
	if err != nil || status != 200 {
		return 0, fmt.Sprintf("%d %v %.200s", status, err, body)
	}
	var doc struct {
		Instance struct {
			Status    string
			LeaseInfo struct {
				LastRenewalTimestamp int64
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil || doc.Instance.Status != "UP" {
		return 0, fmt.Sprintf("%v %.200s", err, body)
	}
	return doc.Instance.LeaseInfo.LastRenewalTimestamp, body
}

// Our two nodes started from the docs' peer-aware application.yml alone
// (with --spring.profiles.active, as Spring starts them): the Spring Boot
// client of each line registers on one, renews, and is read back UP from
// both, its renewals replicated to the other.
func TestSpringPeerAwareConfig(t *testing.T) {
	requireJava(t)
	port := freePort(t, "127.0.0.2")
	file := filepath.Join(t.TempDir(), "application.yml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(peerAwareYML, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, profile := range []string{"peer1", "peer2"} {
		p := start(t, profile, goBinary(t, "cmd/eureka"), "--spring.config.location="+file, "--spring.profiles.active="+profile)
		addr := p.await(`"registry listening","addr":"([0-9.:]+)"`, 30*time.Second)[1]
		nodes = append(nodes, "http://"+addr)
	}
	if want := fmt.Sprintf("http://127.0.0.2:%d", port); nodes[0] != want {
		t.Fatalf("peer1 listens on %s, want %s", nodes[0], want)
	}
	for _, line := range springLines {
		t.Run(line.name, func(t *testing.T) {
			id := "orders-" + line.name
			c := startSpringClientOf(t, line.project, "orders", id, nodes[0]+"/eureka/")
			for _, node := range nodes {
				eventually(t, 10*time.Second, id+" UP on "+node, func() (bool, string) {
					ts, got := lastRenewal(t, node, "ORDERS", id)
					return ts > 0, got
				})
			}
			first, _ := lastRenewal(t, nodes[1], "ORDERS", id)
			eventually(t, 10*time.Second, "a renewal of "+id+" replicated to peer2", func() (bool, string) {
				ts, got := lastRenewal(t, nodes[1], "ORDERS", id)
				return ts > first, got
			})
			c.stop()
			for _, node := range nodes {
				eventually(t, 10*time.Second, id+" cancelled on "+node, func() (bool, string) {
					status, body, _ := tryCall("GET", node+"/eureka/apps/ORDERS/"+id, nil, "Accept", "application/json")
					return status == 404, fmt.Sprintf("%d %s", status, strings.TrimSpace(body))
				})
			}
		})
	}
}

// Our server serving HTTPS from a PKCS12 key store named by server.ssl.*,
// with client-auth need and a PKCS12 trust store: the Spring Boot client
// of each line, trusting our CA and presenting its own key store
// (eureka.client.tls.*), registers over it; a client without a
// certificate is refused.
func TestSpringClientOverPKCS12(t *testing.T) {
	requireJava(t)
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	store, trust := ca.KeyStore(t, "server", "changeit"), ca.TrustStore(t, "trustit")
	clientStore := ca.KeyStore(t, "client", "clientpw")
	port := freePort(t, "127.0.0.1")
	conf := t.TempDir()
	yml := fmt.Sprintf("server:\n  address: 127.0.0.1\n  port: %d\n  ssl:\n    key-store: %s\n    key-store-type: PKCS12\n    key-store-password: changeit\n"+
		"    client-auth: need\n    trust-store: %s\n    trust-store-type: PKCS12\n    trust-store-password: trustit\n", port, store, trust)
	if err := os.WriteFile(filepath.Join(conf, "application.yml"), []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := start(t, "ours over TLS", goBinary(t, "cmd/eureka"), "--spring.config.location="+filepath.Join(conf, "application.yml"))
	srv.await(`"registry listening"`, 30*time.Second)
	base := fmt.Sprintf("https://127.0.0.1:%d", port)

	anon := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}, DisableKeepAlives: true}}
	if resp, err := anon.Get(base + "/eureka/apps"); err == nil {
		resp.Body.Close()
		t.Fatalf("a client without a certificate got %d", resp.StatusCode)
	}
	cert := ca.Cert(t, "reader")
	reader := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{cert}}, DisableKeepAlives: true}}
	for _, line := range springLines {
		t.Run(line.name, func(t *testing.T) {
			id := "secure-" + line.name
			startSpringClientOf(t, line.project, "secure", id, base+"/eureka/",
				"--eureka.client.tls.enabled=true",
				"--eureka.client.tls.trust-store=file:"+trust, "--eureka.client.tls.trust-store-type=PKCS12", "--eureka.client.tls.trust-store-password=trustit",
				"--eureka.client.tls.key-store=file:"+clientStore, "--eureka.client.tls.key-store-type=PKCS12", "--eureka.client.tls.key-store-password=clientpw",
				"--eureka.client.tls.key-password=clientpw")
			resp, err := reader.Get(base + "/eureka/apps/SECURE/" + id)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET the registered client: %d", resp.StatusCode)
			}
		})
	}
}
