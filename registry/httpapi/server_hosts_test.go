package httpapi

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// hostCall sends method path to the server at addr as a page at host
// rebound to 127.0.0.1 would.
func hostCall(t *testing.T, addr, method, path, host string) (int, string) {
	t.Helper()
	return testkit.Rebound(t, method, "http://"+addr+path, host)
}

func hostServer(t *testing.T, listen string, auth AuthConfig, allowed ...string) (string, *registry.Store) {
	t.Helper()
	s, _ := newTestStore(t, registry.Config{})
	mustRegister(t, s, inst("A", "x"), false)
	other := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "dashboard data") })
	srv := NewServer(NewAPI(s, APIConfig{Auth: auth}), ServerConfig{Addr: listen, Other: other, AllowedHosts: allowed})
	startForTest(t, srv)
	_, port, _ := net.SplitHostPort(srv.Addr().String())
	return "127.0.0.1:" + port, s
}

// A registry on loopback without credentials answers a page rebound to
// 127.0.0.1 with 403 (its API, writes with the write guard's header
// included, and the pages beside it), while loopback names and allowed
// hosts are answered.
func TestLoopbackRegistryRefusesForeignHosts(t *testing.T) {
	addr, s := hostServer(t, "127.0.0.1:0", AuthConfig{}, "registry.internal", "dev.example:1234")
	_, port, _ := net.SplitHostPort(addr)
	rebound := "rebind.attacker.example:" + port
	for _, c := range []struct{ method, path string }{
		{"PUT", "/eureka/apps/A/x/status?value=OUT_OF_SERVICE"},
		{"GET", "/eureka/apps/"},
		{"GET", "/api/summary"},
	} {
		code, body := hostCall(t, addr, c.method, c.path, rebound)
		if code != 403 || !strings.Contains(body, "AllowedHosts (-allowed-hosts)") || !strings.Contains(body, `"`+rebound+`"`) {
			t.Errorf("%s %s with Host %s: %d %q, want 403 naming the host and the setting", c.method, c.path, rebound, code, body)
		}
	}
	if i, _ := s.Get("A", "x"); i.Status != eureka.StatusUp {
		t.Fatalf("a refused write changed the instance: %s", i.Status)
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "app.localhost:" + port, "LOCALHOST.",
		"127.1.2.3:" + port, "registry.internal:" + port, "Registry.Internal", "dev.example:1234", ""} {
		if code, body := hostCall(t, addr, "GET", "/api/summary", host); code != 200 {
			t.Errorf("Host %q: %d %q, want 200", host, code, body)
		}
	}
	for _, host := range []string{"dev.example:" + port, "localhost.attacker.example", "127.0.0.1.attacker.example", "[::2]:" + port, "10.0.0.1:" + port} {
		if code, _ := hostCall(t, addr, "GET", "/eureka/apps/", host); code != 403 {
			t.Errorf("Host %q: %d, want 403", host, code)
		}
	}
	if code, _ := hostCall(t, addr, "PUT", "/eureka/apps/A/x/status?value=OUT_OF_SERVICE", "localhost:"+port); code != 200 {
		t.Errorf("the same write with Host localhost: %d", code)
	}
}

// With credentials, or listening beyond loopback, every Host is answered:
// the guard protects the developer's registry that trusts its loopback.
func TestHostGuardOnlyOnOpenLoopback(t *testing.T) {
	withAuth, _ := hostServer(t, "127.0.0.1:0", AuthConfig{Users: []Account{account(t, "ops", "s3cret")}})
	if code, body := hostCall(t, withAuth, "GET", "/eureka/apps/", "rebind.attacker.example"); code != 200 {
		t.Errorf("with credentials: %d %q", code, body)
	}
	everywhere, _ := hostServer(t, ":0", AuthConfig{})
	if code, body := hostCall(t, everywhere, "GET", "/eureka/apps/", "rebind.attacker.example"); code != 200 {
		t.Errorf("listening on every address: %d %q", code, body)
	}
}

// A malformed allowed host fails the start, naming it.
func TestAllowedHostsRefused(t *testing.T) {
	for _, bad := range []string{"", "http://x", "x:0", "x:port", "x/y", "[::1"} {
		srv := NewServer(NewAPI(registry.New(registry.Config{}), APIConfig{}), ServerConfig{Addr: "127.0.0.1:0", AllowedHosts: []string{bad}})
		err := srv.Start()
		if err == nil {
			srv.Stop(t.Context())
			t.Errorf("%q: started", bad)
			continue
		}
		if !strings.Contains(err.Error(), "AllowedHosts (-allowed-hosts)") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
