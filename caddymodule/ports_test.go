package caddymodule

import (
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
)

// The gateway tells the application the prefix it stripped
// (X-Forwarded-Prefix, as Spring's StripPrefix), replacing one a client
// sent; an application that enables only its secure port is reached over
// HTTPS on it; one that enables neither port gets a 503 saying so; and a
// reverse_proxy's eureka source leaves out instances without the port it
// asks for.
func TestGatewayPrefixAndSecurePort(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%t %s prefix=%s", r.TLS != nil, r.URL.Path, r.Header.Get("X-Forwarded-Prefix"))
	})
	plain := httptest.NewServer(echo)
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(echo)
	defer tlsSrv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	portOf := func(s *httptest.Server) int {
		_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
		n, _ := strconv.Atoi(p)
		return n
	}
	inst := func(app, id string, port, securePort int, plainOn, secureOn bool) *eureka.InstanceInfo {
		return &eureka.InstanceInfo{InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", App: app, IPAddr: "127.0.0.1",
			Status: eureka.StatusUp, Port: eureka.Port{Number: port, Enabled: plainOn},
			SecurePort:     eureka.Port{Number: securePort, Enabled: secureOn},
			DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}}
	}

	loadConfig(t, testConfig("", "registry "+newRegistry("ports-test"),
		site(registryPort, "\teureka_server"),
		site(gatewayPort, "\thandle /rp/* {\n\t\turi strip_prefix /rp\n\t\treverse_proxy {\n\t\t\tdynamic eureka mixed\n\t\t}\n\t}\n"+
			"\teureka_gateway {\n\t\ttls_trusted_ca_certs "+ca+"\n\t}")))

	registerVia(t, registryURL, inst("PLAIN", "p1", portOf(plain), 1, true, false))
	registerVia(t, registryURL, inst("SECURE", "s1", 1, portOf(tlsSrv), false, true))
	registerVia(t, registryURL, inst("NOPORT", "n1", portOf(plain), portOf(tlsSrv), false, false))
	// MIXED: one instance with its plain port, one with only its secure port
	// (whose plain port would answer, were it asked).
	registerVia(t, registryURL, inst("MIXED", "m1", portOf(plain), 1, true, false))
	registerVia(t, registryURL, inst("MIXED", "m2", portOf(plain), portOf(tlsSrv), false, true))

	req, _ := http.NewRequest("GET", gatewayURL+"/plain/items/7", nil)
	req.Header.Set("X-Forwarded-Prefix", "/forged")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 200)
	n, _ := resp.Body.Read(body)
	resp.Body.Close()
	if got := string(body[:n]); resp.StatusCode != 200 || got != "false /items/7 prefix=/plain" {
		t.Errorf("plain app: %d %q, want false /items/7 prefix=/plain", resp.StatusCode, got)
	}
	if status, body := do(t, "GET", gatewayURL+"/Secure/items/7", nil); status != 200 || body != "true /items/7 prefix=/Secure" {
		t.Errorf("secure-only app: %d %q, want it reached over TLS", status, body)
	}
	if status, body := do(t, "GET", gatewayURL+"/noport/x", nil); status != 503 || body != "application \"noport\" has no instance with an enabled port\n" {
		t.Errorf("app without an enabled port: %d %q", status, body)
	}
	// The plain source skips m2, whose plain port is disabled, every time.
	for range 4 {
		if status, body := do(t, "GET", gatewayURL+"/rp/x", nil); status != 200 || body != "false /x prefix=" {
			t.Fatalf("reverse_proxy over the eureka source: %d %q", status, body)
		}
	}
}
