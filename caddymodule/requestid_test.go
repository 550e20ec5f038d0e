package caddymodule

import (
	"encoding/json"
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

// The gateway's own fields (the request id the instance gets, new or
// kept, X-Forwarded-Prefix) are what Caddy's placeholders see after
// eureka_gateway ({http.request.header.*}, in a log_append), and the
// forwarding fields reverse_proxy adds to its own copy of the request
// (X-Forwarded-For, Via) are out of their sight, with either transport
// alike, and whether the lean client or net/http's Transport (an Upgrade
// request, answered without one) carries the attempt.
func TestGatewayFieldsInCaddysPlaceholders(t *testing.T) {
	type got struct{ id, via string }
	gots := make(chan got, 1)
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gots <- got{r.Header.Get("X-Request-Id"), r.Header.Get("Via")}
	}))
	t.Cleanup(inst.Close)
	type entry struct {
		ID  string `json:"request_id"`
		Pre string `json:"prefix"`
		XFF string `json:"xff"`
		Via string `json:"via"`
	}
	seen := map[string][]entry{}
	for _, transport := range []string{"eureka", "reverse_proxy"} {
		file := filepath.Join(t.TempDir(), "access.log")
		name := newRegistry("request-id-log")
		loadConfig(t, testConfig("", "registry "+name, site(registryPort, "\teureka_server"),
			site(gatewayPort, fmt.Sprintf("\tlog {\n\t\toutput file %s\n\t}\n"+
				"\tlog_append request_id {http.request.header.X-Request-Id}\n\tlog_append prefix {http.request.header.X-Forwarded-Prefix}\n"+
				"\tlog_append xff {http.request.header.X-Forwarded-For}\n\tlog_append via {http.request.header.Via}\n"+
				"\teureka_gateway {\n\t\ttransport %s\n\t}", file, transport))))
		registerVia(t, registryURL, serverBackend("i", inst).instance("ids"))
		for _, c := range []struct {
			sent    string
			upgrade bool // carried by net/http's Transport
		}{{"", false}, {"client-chosen-request-id-0001", false}, {"", true}} {
			req, _ := http.NewRequest(http.MethodGet, gatewayURL+"/ids/x", nil)
			if c.upgrade {
				req.Header.Set("Connection", "Upgrade")
				req.Header.Set("Upgrade", "x-test")
			}
			if c.sent != "" {
				req.Header.Set("X-Request-Id", c.sent)
			}
			resp, err := probe.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", transport, err)
			}
			resp.Body.Close()
			g := <-gots
			if g.id == "" || c.sent != "" && g.id != c.sent || g.via != "1.1 Caddy" {
				t.Fatalf("%s: the instance got X-Request-Id %q (sent %q), Via %q", transport, g.id, c.sent, g.via)
			}
			var e entry
			testkit.Eventually(t, 5*time.Second, "the access log entry of "+g.id, func() bool {
				data, _ := os.ReadFile(file)
				for l := range strings.SplitSeq(string(data), "\n") {
					if strings.Contains(l, `"request_id":"`+g.id+`"`) {
						return json.Unmarshal([]byte(l), &e) == nil
					}
				}
				return false
			})
			if e.Pre != "/ids" {
				t.Errorf("%s: {http.request.header.X-Forwarded-Prefix} after the gateway %q, want /ids", transport, e.Pre)
			}
			e.ID = "" // new ids differ between the transports
			seen[transport] = append(seen[transport], e)
		}
	}
	if own, rp := seen["eureka"], seen["reverse_proxy"]; fmt.Sprint(own) != fmt.Sprint(rp) {
		t.Errorf("the placeholders after the gateway saw %+v with its own transport, %+v with reverse_proxy", own, rp)
	}
}
