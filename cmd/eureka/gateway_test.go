package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

func TestGatewayOptions(t *testing.T) {
	o, err := parseOptions([]string{"-gateway", "127.0.0.1:8080", "-gateway-retries", "2", "-gateway-trusted-proxies", "10.0.0.0/8, 192.0.2.1",
		"-gateway-rewrite-host"}, func(k string) string {
		if k == "EUREKA_GATEWAY_RESPONSE_TIMEOUT" {
			return "5s"
		}
		return ""
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	g := o.gateway
	if o.gatewayServer.Addr != "127.0.0.1:8080" || g.Retries != 2 || g.ResponseTimeout != 5*time.Second || !g.RewriteHost ||
		g.DialTimeout != gateway.DefaultDialTimeout || g.MaxRequestBodySize != gateway.DefaultMaxRequestBodySize ||
		len(g.TrustedProxies) != 2 || g.TrustedProxies[1] != netip.MustParsePrefix("192.0.2.1/32") {
		t.Errorf("gateway options: %+v %+v", o.gatewayServer, g)
	}
	if d, _ := parseOptions(nil, func(string) string { return "" }, io.Discard); d.gatewayServer.Addr != "" {
		t.Errorf("a gateway by default: %q", d.gatewayServer.Addr)
	}
	if _, err := parseOptions([]string{"-gateway-trusted-proxies", "nonsense"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("a bad trusted proxy accepted")
	}
}

// With -gateway the process serves the registry and routes by it.
func TestAppWithGateway(t *testing.T) {
	o, err := parseOptions([]string{"-addr", "127.0.0.1:0", "-gateway", "127.0.0.1:0"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var reg *httpapi.Server
	var gw *gateway.Server
	app := fx.New(appOptions(o, zap.NewNop()), fx.Populate(&reg, &gw))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := app.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "backend "+r.URL.Path) }))
	defer backend.Close()
	inst := &eureka.InstanceInfo{InstanceID: "b", HasInstanceID: true, HostName: "127.0.0.1", App: "ORDERS", IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: backend.Listener.Addr().(*net.TCPAddr).Port, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Post("http://"+reg.Addr().String()+"/eureka/apps/ORDERS", "application/json", strings.NewReader(string(eureka.AppendInstanceJSON(nil, inst))))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("register: %d", resp.StatusCode)
	}
	resp, err = c.Get("http://" + gw.Addr().String() + "/orders/items/7")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "backend /items/7" {
		t.Fatalf("through the gateway: %d %q", resp.StatusCode, body)
	}
}
