package gateway

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/eurekagate/eurekagate/caddymodule"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// readCaddyfile points Caddy's data and config folders at a temporary
// folder for the test and returns the example Caddyfile.
func readCaddyfile(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", dir)
	body, err := os.ReadFile("Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// The example Caddyfile adapts and its config validates (every module
// provisions), without listening on its ports.
func TestExampleCaddyfile(t *testing.T) {
	body := readCaddyfile(t)
	cfgJSON, _, err := caddyconfig.GetAdapter("caddyfile").Adapt(body, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"eureka_gateway"`, `"eureka_server"`, `"source":"eureka"`, `"policy":"eureka_round_robin"`} {
		if !strings.Contains(string(cfgJSON), want) {
			t.Errorf("adapted config lacks %s", want)
		}
	}
	var cfg caddy.Config
	if err := caddy.StrictUnmarshalJSON(cfgJSON, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := caddy.Validate(&cfg); err != nil {
		t.Fatalf("validate: %v", err)
	}
}

// The example runs as its README says, on free ports instead of 8761 and
// 8080: a client that names the registry localhost (Spring's default URL)
// reaches the Eureka API, and /api/orders/call reaches /call on an ORDERS
// instance.
func TestExampleRoutes(t *testing.T) {
	body := readCaddyfile(t)
	regPort, gwPort := strconv.Itoa(testkit.FreePort(t)), strconv.Itoa(testkit.FreePort(t))
	body = []byte(strings.NewReplacer("8761", regPort, "8080", gwPort).Replace(string(body)))
	cfgJSON, _, err := caddyconfig.GetAdapter("caddyfile").Adapt(body, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cfg caddy.Config
	if err := caddy.StrictUnmarshalJSON(cfgJSON, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Admin = &caddy.AdminConfig{Disabled: true}
	if err := caddy.Run(&cfg); err != nil {
		t.Fatal(err)
	}
	defer caddy.Stop()

	orders := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "ORDERS %s", r.URL.Path)
	}))
	defer orders.Close()
	_, ordersPort, _ := net.SplitHostPort(orders.Listener.Addr().String())
	reg := `{"instance":{"instanceId":"o1","hostName":"127.0.0.1","app":"ORDERS","ipAddr":"127.0.0.1","status":"UP",
		"port":{"$":` + ordersPort + `,"@enabled":"true"},"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}}}`
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Post("http://localhost:"+regPort+"/eureka/apps/ORDERS", "application/json", strings.NewReader(reg))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("registering through http://localhost:%s/eureka/: %d, want 204", regPort, resp.StatusCode)
	}
	for _, path := range []string{"/api/orders/call", "/orders/call"} {
		resp, err := client.Get("http://127.0.0.1:" + gwPort + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != "ORDERS /call" {
			t.Errorf("GET %s: %d %q, want 200 \"ORDERS /call\"", path, resp.StatusCode, b)
		}
	}
}
