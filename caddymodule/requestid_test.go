package caddymodule

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/gatewaysuite"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// A trusted proxy's X-Request-Id (the server's trusted_proxies) reaches
// the instance as it came, one copy of it; the shared suite checks an
// untrusted client's (RequestIDs).
func TestTrustedProxyRequestIDThroughCaddy(t *testing.T) {
	name := newRegistry("request-id")
	loadConfig(t, testConfig("servers {\n\t\ttrusted_proxies static 127.0.0.0/8\n\t}", "registry "+name,
		site(registryPort, "\teureka_server"), site(gatewayPort, "\teureka_gateway")))
	v, ok := lookupEntry(name)
	if !ok {
		t.Fatalf("registry %s not running", name)
	}
	gatewaysuite.RequestIDs(t, gatewayURL, v.store, true)
}

// The request id the instance gets is the one Caddy's placeholders see
// after eureka_gateway ({http.request.header.X-Request-Id}, in a
// log_append), with either transport: a new id and a kept one alike.
func TestRequestIDInCaddysAccessLog(t *testing.T) {
	got := make(chan string, 1)
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("X-Request-Id")
	}))
	t.Cleanup(inst.Close)
	for _, transport := range []string{"eureka", "reverse_proxy"} {
		file := filepath.Join(t.TempDir(), "access.log")
		name := newRegistry("request-id-log")
		loadConfig(t, testConfig("", "registry "+name, site(registryPort, "\teureka_server"),
			site(gatewayPort, fmt.Sprintf("\tlog {\n\t\toutput file %s\n\t}\n\tlog_append request_id {http.request.header.X-Request-Id}\n\teureka_gateway {\n\t\ttransport %s\n\t}", file, transport))))
		registerVia(t, registryURL, serverBackend("i", inst).instance("ids"))
		for _, sent := range []string{"", "client-chosen-request-id-0001"} {
			req, _ := http.NewRequest(http.MethodGet, gatewayURL+"/ids/x", nil)
			if sent != "" {
				req.Header.Set("X-Request-Id", sent)
			}
			resp, err := probe.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", transport, err)
			}
			resp.Body.Close()
			id := <-got
			if id == "" || sent != "" && id != sent {
				t.Fatalf("%s: the instance got X-Request-Id %q (sent %q)", transport, id, sent)
			}
			testkit.Eventually(t, 5*time.Second, "the access log entry of "+id, func() bool {
				data, _ := os.ReadFile(file)
				return strings.Contains(string(data), `"request_id":"`+id+`"`)
			})
		}
	}
}
