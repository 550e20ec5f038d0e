package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/caddyserver/caddy/v2"

	"github.com/eurekagate/eurekagate/internal/fixture"
)

// The gateway study's Caddy targets with every feature on, as users run
// eureka_gateway: the study's 20 traffic rules (the matching one last),
// Caddy's access log written to a file through eureka_buffered (as nginx's
// is buffered), Caddy's HTTP metrics and eureka_gateway's request ids;
// once with eureka_gateway's own transport (the default) and once with
// transport reverse_proxy, beside Caddy's reverse_proxy with a static
// upstream and the least a proxy handler does (caddyfloor.go), with the
// same access log and metrics.

// The roles of the Caddy targets with every feature on.
const (
	roleCaddyFull       = "caddy-full"        // eureka_gateway, its own transport
	roleCaddyFullRP     = "caddy-full-rp"     // eureka_gateway, transport reverse_proxy
	roleCaddyStaticFull = "caddy-static-full" // reverse_proxy, static upstream
	roleCaddyFloor      = "caddy-floor"       // eurekabench_floor (caddyfloor.go)
)

// caddyFullRoles are the roles serveCaddyFull serves.
var caddyFullRoles = []string{roleCaddyFull, roleCaddyFullRP, roleCaddyStaticFull, roleCaddyFloor}

// startCaddyFull starts a process for each of caddyFullRoles, each on a
// port of its own, adding its stop to stops, and returns their targets.
func (c gatewayBenchConfig) startCaddyFull(backend string, stops *[]func()) ([]*target, error) {
	ports, err := freePorts(len(caddyFullRoles))
	if err != nil {
		return nil, err
	}
	names := map[string]string{
		roleCaddyFull:       "Caddy eureka_gateway, all on",
		roleCaddyFullRP:     "Caddy gateway via reverse_proxy",
		roleCaddyStaticFull: "Caddy reverse_proxy, log+metrics",
		roleCaddyFloor:      "Caddy, the least a proxy handler does",
	}
	var out []*target
	for k, role := range caddyFullRoles {
		listen := "127.0.0.1:" + ports[k]
		stop, pid, err := c.startServer(role, listen, backend)
		if err != nil {
			return nil, fmt.Errorf("starting the %s: %v", role, err)
		}
		*stops = append(*stops, stop)
		out = append(out, &target{name: names[role], addr: listen, path: "/svc/x",
			pids: func() []int { return []int{pid} }, headers: fixture.RuleHeaders})
	}
	return out, nil
}

// serveCaddyFull is the process of one of caddyFullRoles: Caddy on
// listen, its registry on a port of its own with the backend registered
// as the two versions the rules select, the access log in a temporary
// file; with profile, a CPU profile of the process.
func serveCaddyFull(ctx context.Context, role, listen, backend, profile string, out io.Writer) error {
	dir, err := os.MkdirTemp("", "eurekabench-caddy-full-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rules := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rules, []byte(fixture.TwentyRules()), 0o644); err != nil {
		return err
	}
	var handlers string
	switch role {
	case roleCaddyFull:
		handlers = fmt.Sprintf(`{"handler": "eureka_gateway", "rules_file": %q}`, rules)
	case roleCaddyFullRP:
		handlers = fmt.Sprintf(`{"handler": "eureka_gateway", "rules_file": %q, "transport": "reverse_proxy"}`, rules)
	case roleCaddyStaticFull:
		handlers = staticProxyHandler(backend, "/svc")
	case roleCaddyFloor:
		handlers = fmt.Sprintf(`{"handler": "eurekabench_floor", "backend": %q}`, backend)
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	port, err := serverPort()
	if err != nil {
		return err
	}
	regAddr := "127.0.0.1:" + port
	cfg := fmt.Sprintf(`{
		"admin": {"disabled": true, "config": {"persist": false}},
		"storage": {"module": "file_system", "root": %q},
		"logging": {"logs": {
			"default": {"level": "ERROR", "exclude": ["http.log.access.access"]},
			"access": {"writer": {"output": "eureka_buffered", "writer": {"output": "file", "filename": %q}}, "encoder": {"format": "json"}, "include": ["http.log.access.access"]}
		}},
		"apps": {
			"eureka": {"registry": "bench"},
			"http": {"metrics": {}, "servers": {
				"registry": {"listen": [%q], "routes": [{"handle": [%s]}]},
				"gateway": {"listen": [%q], "routes": [{"handle": [%s]}], "logs": {"default_logger_name": "access"}}
			}}
		}
	}`, dir, filepath.Join(dir, "access.log"), regAddr, eurekaServerHandler, listen, handlers)
	os.Setenv("XDG_DATA_HOME", dir)
	os.Setenv("XDG_CONFIG_HOME", dir)
	if err := caddy.Load([]byte(cfg), true); err != nil {
		return fmt.Errorf("loading caddy: %v", err)
	}
	defer caddy.Stop()
	for _, i := range versionInstances(backend) {
		if err := registerInstance(regAddr, i); err != nil {
			return err
		}
	}
	return serveProfiled(ctx, profile, out)
}

// caddyComparisons are the Caddy targets' comparisons, in the
// NAME: ours=X anchor=Y ratio=Z form: the gateway with every feature on
// against the same through reverse_proxy, against Caddy's reverse_proxy
// with a static upstream and its log and metrics, and against the
// anchors (nginx with its access log, HAProxy; left out when nil). full
// is startCaddyFull's targets.
func caddyComparisons(full []*target, nginxLog, haproxy *target) []anchorComparison {
	own, viaRP, static, floor := full[0], full[1], full[2], full[3]
	cs := []anchorComparison{{"caddy-all-on/via-reverse_proxy", own, viaRP}, {"caddy-all-on/caddy-static", own, static}, {"caddy-all-on/caddy-floor", own, floor}}
	for _, c := range []anchorComparison{{"caddy-all-on/nginx-log", own, nginxLog}, {"caddy-all-on/haproxy", own, haproxy}, {"caddy-floor/nginx-log", floor, nginxLog}} {
		if c.anchor != nil {
			cs = append(cs, c)
		}
	}
	return cs
}
