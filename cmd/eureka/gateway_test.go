package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/routing"
)

func TestGatewayOptions(t *testing.T) {
	o, err := parseOptions([]string{"-gateway", "127.0.0.1:8080", "-gateway-retries", "2", "-gateway-trusted-proxies", "10.0.0.0/8, 192.0.2.1",
		"-gateway-rewrite-host"}, envOf(map[string]string{"EUREKA_GATEWAY_RESPONSE_HEADER_TIMEOUT": "7s"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	g, r := o.gateway, o.gateway.Routing
	if o.gatewayServer.Addr != "127.0.0.1:8080" || r.Retries != 2 || r.ResponseHeaderTimeout != 7*time.Second || r.ReadTimeout != routing.DefaultReadTimeout || !g.RewriteHost ||
		r.DialTimeout != routing.DefaultDialTimeout || g.MaxRequestBodySize != gateway.DefaultMaxRequestBodySize ||
		len(r.TrustedProxies) != 2 || r.TrustedProxies[1] != netip.MustParsePrefix("192.0.2.1/32") {
		t.Errorf("gateway options: %+v %+v", o.gatewayServer, g)
	}
	if d, _ := parseOptions(nil, noEnv, io.Discard); d.gatewayServer.Addr != "" {
		t.Errorf("a gateway by default: %q", d.gatewayServer.Addr)
	}
	if _, err := parseOptions([]string{"-gateway-trusted-proxies", "nonsense"}, noEnv, io.Discard); err == nil {
		t.Error("a bad trusted proxy accepted")
	}
}

// With -gateway the process serves the registry and routes by it, to an
// instance's plain port, and over TLS to the secure port of one that
// enables only that, its certificate checked against -gateway-trusted-ca.
func TestAppWithGateway(t *testing.T) {
	ca := testkit.NewCA(t, t.TempDir(), "instances")
	var reg *httpapi.Server
	var gw *gateway.Server
	startApp(t, []string{"-addr", "127.0.0.1:0", "-gateway", "127.0.0.1:0", "-gateway-trusted-ca", ca.File}, &reg, &gw)
	answer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "backend %s tls=%t", r.URL.Path, r.TLS != nil)
	})
	plain := httptest.NewServer(answer)
	defer plain.Close()
	secure := httptest.NewUnstartedServer(answer)
	secure.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Cert(t, "secure")}}
	secure.StartTLS()
	defer secure.Close()
	port := func(s *httptest.Server) int { return s.Listener.Addr().(*net.TCPAddr).Port }

	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, tc := range []struct {
		app  string
		port eureka.Port
		sec  eureka.Port
		want string
	}{
		{"ORDERS", eureka.Port{Number: port(plain), Enabled: true}, eureka.Port{}, "backend /items/7 tls=false"},
		{"VAULT", eureka.Port{Number: 1}, eureka.Port{Number: port(secure), Enabled: true}, "backend /items/7 tls=true"},
	} {
		inst := &eureka.InstanceInfo{InstanceID: "b-" + tc.app, HasInstanceID: true, HostName: "127.0.0.1", App: tc.app, IPAddr: "127.0.0.1",
			Status: eureka.StatusUp, Port: tc.port, SecurePort: tc.sec,
			DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}}
		resp, err := c.Post("http://"+reg.Addr().String()+"/eureka/apps/"+tc.app, "application/json", strings.NewReader(string(eureka.AppendInstanceJSON(nil, inst))))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 204 {
			t.Fatalf("register %s: %d", tc.app, resp.StatusCode)
		}
		resp, err = c.Get("http://" + gw.Addr().String() + "/" + strings.ToLower(tc.app) + "/items/7")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != tc.want {
			t.Errorf("%s through the gateway: %d %q, want %q", tc.app, resp.StatusCode, body, tc.want)
		}
	}
	if _, err := parseOptions([]string{"-gateway-trusted-ca", filepath.Join(t.TempDir(), "missing.pem")}, noEnv, io.Discard); err == nil {
		t.Error("a missing -gateway-trusted-ca accepted")
	}
}
