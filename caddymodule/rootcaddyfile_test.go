package caddymodule

import (
	"encoding/base64"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
)

// exposedBlock returns the root Caddyfile's commented block for a
// registry exposed to a network, uncommented.
func exposedBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	_, tail, ok := strings.Cut(string(b), "\n# Exposed to a network")
	if !ok {
		t.Fatal("the Caddyfile has no block for a registry exposed to a network")
	}
	_, block, _ := strings.Cut(tail, "\n#\n")
	var out []string
	for _, line := range strings.Split(block, "\n") {
		line = strings.TrimPrefix(strings.TrimPrefix(line, "#"), " ")
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// The commented block works: run on loopback, reads (the API's and the
// dashboard) are open, writes need the example credentials, which pass:
// the access rule of docs/security.md.
func TestRootCaddyfileExposedBlockWorks(t *testing.T) {
	block := exposedBlock(t)
	if !strings.Contains(block, "eureka.example.com {") || !strings.Contains(block, "basic_auth") {
		t.Fatalf("unexpected block:\n%s", block)
	}
	adaptCaddyfile(t, block) // as written, with its domain names
	local := strings.NewReplacer(
		"eureka.example.com {", "http://:"+registryPort+" {\n\tbind 127.0.0.1",
		"gateway.example.com {", "http://:"+gatewayPort+" {\n\tbind 127.0.0.1",
	).Replace(block)
	loadConfig(t, testConfig("", "registry "+newRegistry("exposed-block-test"), local))

	creds := "Basic " + base64.StdEncoding.EncodeToString([]byte("app:s3cret"))
	send := func(method, path, authorization string, body []byte) int {
		t.Helper()
		req, _ := http.NewRequest(method, "http://127.0.0.1:"+registryPort+path, strings.NewReader(string(body)))
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	i := newBackend(t, "a").instance("orders")
	reg := eureka.AppendInstanceJSON(nil, i)
	for _, c := range []struct {
		method, path, auth string
		body               []byte
		want               int
	}{
		{"POST", "/eureka/apps/ORDERS", "", reg, 401},
		{"GET", "/", "", nil, 200},
		{"POST", "/eureka/apps/ORDERS", creds, reg, 204},
		{"GET", "/eureka/apps/ORDERS", "", nil, 200},
		{"PUT", "/eureka/apps/ORDERS/a", "", nil, 401},
		{"PUT", "/eureka/apps/ORDERS/a", creds, nil, 200},
		{"GET", "/", creds, nil, 200},
	} {
		if got := send(c.method, c.path, c.auth, c.body); got != c.want {
			t.Errorf("%s %s (credentials %t): %d, want %d", c.method, c.path, c.auth != "", got, c.want)
		}
	}
}
