package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
)

func init() {
	caddy.RegisterModule(new(Gateway))
}

// Gateway routes requests by application name, as Spring Cloud Gateway's
// discovery locator does: a request for /<app>/<rest> is proxied to /<rest>
// on an UP instance of <app> (matched case-insensitively), taking the
// instances in turn, with the usual X-Forwarded-* headers. A request for an
// unknown application, or one with no UP instance, is answered 503 with a
// short plain-text reason naming it. A request for / goes to the next
// handler.
//
// It is reverse_proxy with the eureka upstream source and the
// eureka_round_robin policy, with passive health checks on so that an
// instance that stops answering is skipped before its lease expires.
type Gateway struct {
	// Retries is how many other instances a failed request is retried on
	// (reverse_proxy's lb_retries). Default: 1.
	Retries int `json:"lb_retries,omitempty"`
	// FailDuration is how long a failed instance is remembered as failed
	// (passive health). Default: 30s.
	FailDuration caddy.Duration `json:"fail_duration,omitempty"`
	// MaxFails is how many failures within FailDuration mark an instance
	// down. Default: 1.
	MaxFails int `json:"max_fails,omitempty"`

	app   *App
	proxy *reverseproxy.Handler
}

// CaddyModule returns the Caddy module information.
func (*Gateway) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.eureka_gateway", New: func() caddy.Module { return new(Gateway) }}
}

// Provision fills in defaults and sets up the embedded reverse_proxy.
func (g *Gateway) Provision(ctx caddy.Context) error {
	if g.Retries == 0 {
		g.Retries = 1
	}
	if g.FailDuration == 0 {
		g.FailDuration = caddy.Duration(30e9)
	}
	if g.MaxFails == 0 {
		g.MaxFails = 1
	}
	v, err := ctx.App("eureka")
	if err != nil {
		return fmt.Errorf("loading eureka app: %v", err)
	}
	g.app = v.(*App)
	raw, err := json.Marshal(map[string]any{
		"dynamic_upstreams": map[string]any{"source": "eureka", "service": "{http.vars." + serviceVar + "}"},
		"load_balancing": map[string]any{
			"selection_policy": map[string]any{"policy": "eureka_round_robin"},
			"retries":          g.Retries,
		},
		"health_checks": map[string]any{"passive": map[string]any{
			"fail_duration": g.FailDuration, "max_fails": g.MaxFails,
		}},
	})
	if err != nil {
		return err
	}
	// Caddy cleans up modules loaded through ctx with the config.
	mod, err := ctx.LoadModuleByID("http.handlers.reverse_proxy", raw)
	if err != nil {
		return fmt.Errorf("loading reverse_proxy: %v", err)
	}
	g.proxy = mod.(*reverseproxy.Handler)
	return nil
}

// ServeHTTP proxies /<app>/<rest> to an instance of <app>.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	name, rest, ok := splitApp(r.URL.Path)
	if !ok {
		return next.ServeHTTP(w, r)
	}
	app := strings.ToUpper(name)
	if len(g.app.Instances(app)) == 0 {
		reason := fmt.Sprintf("no application %q is registered\n", name)
		if len(g.app.allInstances(app)) > 0 {
			reason = fmt.Sprintf("application %q has no UP instance\n", name)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, err := w.Write([]byte(reason))
		return err
	}
	caddyhttp.SetVar(r.Context(), serviceVar, app)
	r.URL.Path = rest
	if r.URL.RawPath != "" {
		if _, rawRest, ok := splitApp(r.URL.RawPath); ok {
			r.URL.RawPath = rawRest
		}
	}
	return g.proxy.ServeHTTP(w, r, next)
}

// splitApp splits "/orders/items/7" into "orders" and "/items/7".
func splitApp(path string) (app, rest string, ok bool) {
	trimmed := strings.TrimLeft(path, "/")
	app, rest, _ = strings.Cut(trimmed, "/")
	if app == "" {
		return "", "", false
	}
	return app, "/" + rest, true
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Gateway)(nil)
	_ caddyhttp.MiddlewareHandler = (*Gateway)(nil)
)
