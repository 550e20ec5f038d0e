package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/valyala/fasthttp"

	_ "github.com/eurekagate/eurekagate/caddymodule"
	"github.com/eurekagate/eurekagate/eureka"
)

// gatewayResult is what the gateway phase measured.
type gatewayResult struct {
	static, dynamic float64 // requests per second
	routableAt      int     // requests after registration until the first 200
}

// benchGateway runs Caddy in this process with three loopback sites: the
// registry (eureka_server), the gateway (eureka_gateway) and a plain
// reverse_proxy with a static upstream. Both proxies front the same
// fasthttp backend; the load goes through each in turn.
func benchGateway(d time.Duration, conc int) (*gatewayResult, error) {
	dir, err := os.MkdirTemp("", "eurekabench-caddy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	os.Setenv("XDG_DATA_HOME", dir)
	os.Setenv("XDG_CONFIG_HOME", dir)

	backendLn, err := newLoopbackListener()
	if err != nil {
		return nil, err
	}
	backend := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.WriteString("ok") }}
	go backend.Serve(backendLn)
	defer backend.Shutdown()
	backendAddr := backendLn.Addr().String()

	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	regAddr, gwAddr, staticAddr := "127.0.0.1:"+ports[0], "127.0.0.1:"+ports[1], "127.0.0.1:"+ports[2]
	cfg := fmt.Sprintf(`{
		"admin": {"disabled": true, "config": {"persist": false}},
		"logging": {"logs": {"default": {"level": "ERROR"}}},
		"apps": {
			"eureka": {"registry": "bench"},
			"http": {"servers": {
				"registry": {"listen": [%q], "routes": [{"handle": [{"handler": "eureka_server"}]}]},
				"gateway": {"listen": [%q], "routes": [{"handle": [{"handler": "eureka_gateway"}]}]},
				"static": {"listen": [%q], "routes": [{"handle": [{"handler": "reverse_proxy", "upstreams": [{"dial": %q}]}]}]}
			}}
		}
	}`, regAddr, gwAddr, staticAddr, backendAddr)
	if err := caddy.Load([]byte(cfg), true); err != nil {
		return nil, fmt.Errorf("loading caddy: %v", err)
	}
	defer caddy.Stop()

	// Register the backend and count the requests until it is routable.
	host, port, _ := net.SplitHostPort(backendAddr)
	portN, _ := strconv.Atoi(port)
	inst := &eureka.InstanceInfo{InstanceID: "backend", HasInstanceID: true, HostName: host, App: "SVC", IPAddr: host,
		Status: eureka.StatusUp, Port: eureka.Port{Number: portN, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}}
	status, err := request(regAddr, "POST", "/eureka/apps/SVC", eureka.AppendInstanceJSON(nil, inst))
	if err != nil || status != fasthttp.StatusNoContent {
		return nil, fmt.Errorf("registering the backend: %d %v", status, err)
	}
	res := &gatewayResult{}
	for res.routableAt = 1; res.routableAt <= 100; res.routableAt++ {
		if status, err := request(gwAddr, "GET", "/svc/x", nil); err == nil && status == 200 {
			break
		}
	}

	get := func(path string) func(int, *fasthttp.Request) {
		return func(_ int, req *fasthttp.Request) { req.SetRequestURI(path) }
	}
	if res.static, err = load(staticAddr, conc, d, 0, get("/x"), 200); err != nil {
		return nil, fmt.Errorf("static upstream: %v", err)
	}
	if res.dynamic, err = load(gwAddr, conc, d, 0, get("/svc/x"), 200); err != nil {
		return nil, fmt.Errorf("gateway: %v", err)
	}
	return res, nil
}

func request(addr, method, path string, body []byte) (int, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://" + addr + path)
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBody(body)
	}
	err := fasthttp.DoTimeout(req, resp, 5*time.Second)
	return resp.StatusCode(), err
}

// freePorts finds n free loopback ports.
func freePorts(n int) ([]string, error) {
	var out []string
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := newLoopbackListener()
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		out = append(out, port)
	}
	return out, nil
}
