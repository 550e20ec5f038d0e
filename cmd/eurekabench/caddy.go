package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/valyala/fasthttp"

	_ "github.com/eurekagate/eurekagate/caddymodule"
	"github.com/eurekagate/eurekagate/eureka"
)

// caddyServer is one HTTP server of a Caddy config: its name, its listen
// address and its route's handlers (JSON objects, comma-separated).
type caddyServer struct{ name, listen, handlers string }

// The handlers the benchmarks put in front of Caddy's servers.
const (
	eurekaServerHandler  = `{"handler": "eureka_server"}`
	eurekaGatewayHandler = `{"handler": "eureka_gateway"}`
)

// staticProxyHandler is Caddy's reverse_proxy with backend as its static
// upstream, after stripping prefix from the path ("" for none), as
// eureka_gateway strips the app's name.
func staticProxyHandler(backend, prefix string) string {
	h := fmt.Sprintf(`{"handler": "reverse_proxy", "upstreams": [{"dial": %q}]}`, backend)
	if prefix != "" {
		h = fmt.Sprintf(`{"handler": "rewrite", "strip_path_prefix": %q}, `, prefix) + h
	}
	return h
}

// runCaddy runs Caddy in this process with the eureka app (registry
// "bench"), no admin endpoint, errors-only logging and servers; its data
// and configuration directories are temporary. stop stops it and removes
// them.
func runCaddy(servers ...caddyServer) (stop func(), err error) {
	dir, err := os.MkdirTemp("", "eurekabench-caddy-")
	if err != nil {
		return nil, err
	}
	os.Setenv("XDG_DATA_HOME", dir)
	os.Setenv("XDG_CONFIG_HOME", dir)
	var list []string
	for _, s := range servers {
		list = append(list, fmt.Sprintf(`%q: {"listen": [%q], "routes": [{"handle": [%s]}]}`, s.name, s.listen, s.handlers))
	}
	cfg := fmt.Sprintf(`{
		"admin": {"disabled": true, "config": {"persist": false}},
		"logging": {"logs": {"default": {"level": "ERROR"}}},
		"apps": {
			"eureka": {"registry": "bench"},
			"http": {"servers": {%s}}
		}
	}`, strings.Join(list, ",\n"))
	if err := caddy.Load([]byte(cfg), true); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("loading caddy: %v", err)
	}
	return func() { caddy.Stop(); os.RemoveAll(dir) }, nil
}

// benchInstance is the backend at addr, registered as SVC.
func benchInstance(addr string) *eureka.InstanceInfo {
	host, port, _ := net.SplitHostPort(addr)
	portN, _ := strconv.Atoi(port)
	return &eureka.InstanceInfo{InstanceID: "backend", HasInstanceID: true, HostName: host, App: "SVC", IPAddr: host,
		Status: eureka.StatusUp, Port: eureka.Port{Number: portN, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}}
}

// registerBackend registers the backend at backendAddr as SVC with the
// registry at regAddr, through its REST API.
func registerBackend(regAddr, backendAddr string) error {
	return registerInstance(regAddr, benchInstance(backendAddr))
}

// registerInstance registers i through the registry's REST API at regAddr.
func registerInstance(regAddr string, i *eureka.InstanceInfo) error {
	status, err := request(regAddr, "POST", "/eureka/apps/"+i.App, eureka.AppendInstanceJSON(nil, i))
	if err != nil || status != fasthttp.StatusNoContent {
		return fmt.Errorf("registering the backend: %d %v", status, err)
	}
	return nil
}

// answerOK is the backend every gateway benchmark proxies to: it answers
// "ok".
func answerOK(ctx *fasthttp.RequestCtx) { ctx.WriteString("ok") }
