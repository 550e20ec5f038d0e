package caddymodule

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/caddyauth"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

func TestBeyondLoopback(t *testing.T) {
	got := beyondLoopback([]string{":8761", "127.0.0.1:8761", "tcp/[::1]:8761", "localhost:80", "0.0.0.0:8761",
		"10.0.0.5:8761", "unix//run/eureka.sock", "[::]:8761", "tcp/127.0.0.2:9000-9001"})
	if want := []string{":8761", "0.0.0.0:8761", "10.0.0.5:8761", "[::]:8761"}; !reflect.DeepEqual(got, want) {
		t.Errorf("beyond loopback: %v, want %v", got, want)
	}
}

func TestAuthenticates(t *testing.T) {
	h := &Server{} // the registry's handler, whose way is looked at
	route := func(hs ...caddyhttp.MiddlewareHandler) caddyhttp.Route { return caddyhttp.Route{Handlers: hs} }
	for _, c := range []struct {
		name string
		srv  *caddyhttp.Server
		want bool
	}{
		{"nothing", &caddyhttp.Server{Routes: caddyhttp.RouteList{route(h)}}, false},
		{"basic_auth", &caddyhttp.Server{Routes: caddyhttp.RouteList{route(&caddyauth.Authentication{}, h)}}, true},
		{"basic_auth in a site's subroute", &caddyhttp.Server{Routes: caddyhttp.RouteList{route(&caddyhttp.Subroute{
			Routes: caddyhttp.RouteList{route(&caddyauth.Authentication{}), route(h)}})}}, true},
		{"forward_auth", &caddyhttp.Server{Routes: caddyhttp.RouteList{route(&reverseproxy.Handler{
			HandleResponse: []caddyhttp.ResponseHandler{{}}}, h)}}, true},
		{"a plain reverse_proxy", &caddyhttp.Server{Routes: caddyhttp.RouteList{route(&reverseproxy.Handler{}, h)}}, false},
		{"another site's basic_auth", &caddyhttp.Server{Routes: caddyhttp.RouteList{
			{Handlers: []caddyhttp.MiddlewareHandler{&caddyauth.Authentication{}}, Terminal: true}, route(h)}}, false},
		{"basic_auth after it", &caddyhttp.Server{Routes: caddyhttp.RouteList{route(h, &caddyauth.Authentication{})}}, false},
		{"not in the server", &caddyhttp.Server{Routes: caddyhttp.RouteList{route(&Server{})}}, true},
	} {
		if got := tlsAuthenticates(c.srv) || authenticatesBefore(c.srv.Routes, h); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A registry served beyond loopback with no authentication in its server
// gets one warning per server when the config starts (the loopback test
// sites stand in for exposed ones here); with basic_auth, or on loopback,
// none.
func TestWarnsWhenExposedWithoutAuth(t *testing.T) {
	hash := testkit.PasswordHash(t, "s3cret")
	real := beyondLoopback
	t.Cleanup(func() { beyondLoopback = real })
	const warning = "the registry is served beyond loopback without authentication"
	load := func(t *testing.T, name, site string) string { return loadLogged(t, name, site) }
	both := site(registryPort, "\teureka_server\n\teureka_dashboard")

	beyondLoopback = func(listen []string) []string { return listen } // as if exposed
	logged := load(t, "exposed-test", both)
	if n := strings.Count(logged, warning); n != 1 || !strings.Contains(logged, `"handlers":["eureka_server","eureka_dashboard"]`) &&
		!strings.Contains(logged, `"handlers":["eureka_dashboard","eureka_server"]`) {
		t.Errorf("%d warnings, want one naming both handlers:\n%s", n, logged)
	}
	withAuth := site(registryPort, fmt.Sprintf("\tbasic_auth {\n\t\tops %s\n\t}\n\teureka_server\n\teureka_dashboard", hash))
	if logged := load(t, "exposed-auth-test", withAuth); strings.Contains(logged, warning) {
		t.Errorf("warned with basic_auth in front:\n%s", logged)
	}

	beyondLoopback = real
	if logged := load(t, "loopback-test", both); strings.Contains(logged, warning) {
		t.Errorf("warned for a site bound to 127.0.0.1:\n%s", logged)
	}
}

// loadLogged loads a config of a registry named name with sites, logging
// in JSON to a file, and returns what it logged once it started.
func loadLogged(t *testing.T, name string, sites ...string) string {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	globals := fmt.Sprintf("log {\n\t\toutput file %s\n\t\tformat json\n\t}", logFile)
	loadConfig(t, testConfig(globals, "registry "+newRegistry(name), sites...))
	var logged string
	testkit.Eventually(t, 5*time.Second, "the config to start", func() bool {
		b, _ := os.ReadFile(logFile)
		logged = string(b)
		return strings.Contains(logged, "serving initial configuration") || strings.Contains(logged, "load complete")
	})
	return logged
}
