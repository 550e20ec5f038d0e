package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/eurekagate/eurekagate/routing"
)

func init() {
	caddy.RegisterModule(new(Gateway))
}

// Gateway routes requests by application name, as Spring Cloud Gateway's
// discovery locator does: a request for /<app>/<rest> is proxied to /<rest>
// on an UP instance of <app> (matched case-insensitively), taking the
// instances in turn, with the usual X-Forwarded-* headers and, as Spring's
// StripPrefix does, X-Forwarded-Prefix: /<app> (appended to the one a
// trusted proxy sent), so that the application can build its own links.
// A request for an unknown application, or one with no UP instance (or
// none passing its health check), is answered 503 with a short plain-text
// reason naming it. A request for / goes to the next handler.
//
// Instances are reached on their plain port. An application none of whose
// instances enables it, but that enables the secure port, is reached over
// HTTPS on the secure port, its certificates verified against the system's
// roots or TLSTrustedCACerts.
//
// It is reverse_proxy with the eureka upstream source and the
// eureka_round_robin policy, with timeouts and passive health checks on:
// a connection refused or not made within DialTimeout, response headers
// not received within ResponseHeaderTimeout, and a connection reset count
// as failures, and with MaxFails 1 an instance is skipped from its first
// failure for FailDuration. A hung instance thus gets no new request after
// its first timeout. The failed request is retried on another instance
// (Retries): always after a failed connection, which sent nothing, and for
// GET, HEAD, OPTIONS and TRACE requests after a timeout or reset. A client
// that gives up before a timeout is not a failure of the instance. With
// the eureka app's health_interval, instances failing their active health
// check are skipped too.
type Gateway struct {
	// Retries is how many other instances a failed request is retried on
	// (reverse_proxy's lb_retries); 0 turns retries off. Default: 1.
	Retries *int `json:"lb_retries,omitempty"`
	// DialTimeout is how long connecting to an instance may take
	// (reverse_proxy's transport http dial_timeout). Default: 3s.
	DialTimeout caddy.Duration `json:"dial_timeout,omitempty"`
	// ResponseHeaderTimeout is how long an instance may take to send its
	// response headers after receiving the request (transport http
	// response_header_timeout). It should exceed the slowest normal
	// response of the applications behind the gateway, since a timeout
	// takes the instance out of rotation; a negative value turns it off
	// (then a hung instance is never detected by passive health).
	// Default: 5s.
	ResponseHeaderTimeout caddy.Duration `json:"response_header_timeout,omitempty"`
	// FailDuration is how long a failed instance is remembered as failed
	// (passive health). Default: 30s.
	FailDuration caddy.Duration `json:"fail_duration,omitempty"`
	// MaxFails is how many failures within FailDuration mark an instance
	// down. Default: 1.
	MaxFails int `json:"max_fails,omitempty"`
	// TLSTrustedCACerts are PEM files of the certificate authorities that
	// sign the certificates of instances reached on their secure port.
	// Default: the system's roots.
	TLSTrustedCACerts []string `json:"tls_trusted_ca_certs,omitempty"`

	app    *App
	proxy  *reverseproxy.Handler // to the plain ports
	secure *reverseproxy.Handler // to the secure ports, over TLS
}

// The gateway's defaults.
const (
	defaultGatewayRetries        = 1
	defaultDialTimeout           = caddy.Duration(3 * time.Second)
	defaultResponseHeaderTimeout = caddy.Duration(5 * time.Second)
	defaultFailDuration          = caddy.Duration(30 * time.Second)
)

// retryMethods are the methods retried after a timeout or a reset, when
// the instance may have received the request: those without a body by
// convention, which Caddy can send again.
var retryMethods = []string{http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace}

// CaddyModule returns the Caddy module information.
func (*Gateway) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.eureka_gateway", New: func() caddy.Module { return new(Gateway) }}
}

// Provision fills in defaults and sets up the embedded reverse_proxy.
func (g *Gateway) Provision(ctx caddy.Context) error {
	v, err := ctx.App("eureka")
	if err != nil {
		return fmt.Errorf("loading eureka app: %v", err)
	}
	g.app = v.(*App)
	for _, secure := range []bool{false, true} {
		raw, err := g.proxyConfig(secure)
		if err != nil {
			return err
		}
		// Caddy cleans up modules loaded through ctx with the config.
		mod, err := ctx.LoadModuleByID("http.handlers.reverse_proxy", raw)
		if err != nil {
			return fmt.Errorf("loading reverse_proxy: %v", err)
		}
		if secure {
			g.secure = mod.(*reverseproxy.Handler)
		} else {
			g.proxy = mod.(*reverseproxy.Handler)
		}
	}
	return nil
}

// proxyConfig fills in defaults and returns the JSON config of the
// embedded reverse_proxy to the plain ports, or to the secure ones.
func (g *Gateway) proxyConfig(secure bool) ([]byte, error) {
	if g.Retries == nil {
		n := defaultGatewayRetries
		g.Retries = &n
	}
	if *g.Retries < 0 {
		return nil, fmt.Errorf("lb_retries %d must not be negative; 0 turns retries off", *g.Retries)
	}
	if g.DialTimeout < 0 {
		return nil, checkDuration("dial_timeout", time.Duration(g.DialTimeout), false)
	}
	if g.FailDuration < 0 {
		return nil, checkDuration("fail_duration", time.Duration(g.FailDuration), false)
	}
	if g.MaxFails < 0 {
		return nil, fmt.Errorf("max_fails %d must be at least 1 (the default)", g.MaxFails)
	}
	if g.DialTimeout == 0 {
		g.DialTimeout = defaultDialTimeout
	}
	if g.ResponseHeaderTimeout == 0 {
		g.ResponseHeaderTimeout = defaultResponseHeaderTimeout
	}
	if g.FailDuration == 0 {
		g.FailDuration = defaultFailDuration
	}
	if g.MaxFails == 0 {
		g.MaxFails = 1
	}
	transport := map[string]any{"protocol": "http", "dial_timeout": g.DialTimeout}
	if g.ResponseHeaderTimeout > 0 {
		transport["response_header_timeout"] = g.ResponseHeaderTimeout
	}
	if secure {
		tls := map[string]any{}
		if len(g.TLSTrustedCACerts) > 0 {
			tls["ca"] = map[string]any{"provider": "file", "pem_files": g.TLSTrustedCACerts}
		}
		transport["tls"] = tls
	}
	return json.Marshal(map[string]any{
		"dynamic_upstreams": map[string]any{"source": "eureka", "service": "{http.vars." + serviceVar + "}", "secure": secure},
		"transport":         transport,
		"load_balancing": map[string]any{
			"selection_policy": map[string]any{"policy": "eureka_round_robin"},
			"retries":          *g.Retries,
			"retry_match":      []map[string]any{{"method": retryMethods}},
		},
		"health_checks": map[string]any{"passive": map[string]any{
			"fail_duration": g.FailDuration, "max_fails": g.MaxFails,
		}},
	})
}

// ServeHTTP proxies /<app>/<rest> to an instance of <app>.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if reason := routing.CheckHost(r.Host); reason != "" {
		// Go lets more through than a host[:port] ("[::1", "a:1:2").
		return plainAnswer(w, http.StatusBadRequest, reason+"\n")
	}
	// The app is read from the escaped path, its dot segments resolved,
	// as the fasthttp gateway reads it (package routing).
	// The path as the client wrote it: RawPath when it differs from
	// Path's default escaping (EscapedPath would give the escaping of the
	// decoded path instead, were RawPath to hold a character such as "{").
	target := r.URL.RawPath
	if target == "" {
		target = r.URL.EscapedPath()
	}
	if routing.HasDotSegment(target) {
		target = string(routing.RemoveDotSegments(nil, target))
	}
	name, rest, ok := routing.SplitApp(target)
	if !ok {
		return next.ServeHTTP(w, r)
	}
	app := routing.AppName(name)
	up := g.app.Instances(app)
	routable := up
	if len(up) > 0 {
		routable = g.app.routable(app, up)
	}
	proxy := g.proxy
	if len(withPort(routable, false)) == 0 && len(withPort(routable, true)) > 0 {
		proxy = g.secure // only secure ports are enabled
	}
	if len(routable) == 0 || (proxy == g.proxy && len(withPort(routable, false)) == 0) {
		reason := fmt.Sprintf("no application %q is registered\n", name)
		switch {
		case len(routable) > 0:
			reason = fmt.Sprintf("application %q has no instance with an enabled port\n", name)
		case len(up) > 0:
			reason = fmt.Sprintf("application %q has no instance passing its health check\n", name)
		case len(g.app.allInstances(app)) > 0:
			reason = fmt.Sprintf("application %q has no UP instance\n", name)
		}
		return plainAnswer(w, http.StatusServiceUnavailable, reason)
	}
	if rest == "" {
		rest = "/"
	}
	path, err := url.PathUnescape(rest)
	if err != nil {
		return plainAnswer(w, http.StatusBadRequest, "the request target has a malformed percent escape\n")
	}
	caddyhttp.SetVar(r.Context(), serviceVar, app)
	dropClaims(r)
	r.Header.Set("X-Forwarded-Prefix", forwardedPrefix(r, name))
	r.URL.Path, r.URL.RawPath = path, ""
	if r.URL.EscapedPath() != rest {
		r.URL.RawPath = rest
	}
	return proxy.ServeHTTP(w, r, next)
}

// plainAnswer answers with a short plain-text message, as the fasthttp
// gateway does.
func plainAnswer(w http.ResponseWriter, status int, msg string) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, err := w.Write([]byte(msg))
	return err
}

// dropClaims removes the headers a client may not set (as the fasthttp
// gateway does): those of routing.ClientClaims unless the client is a
// trusted proxy (reverse_proxy itself replaces X-Forwarded-For, -Proto
// and -Host), and any whose name has an underscore (routing.HasUnderscore).
func dropClaims(r *http.Request) {
	if trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool); !trusted {
		for _, h := range routing.ClientClaims {
			r.Header.Del(h)
		}
	}
	for k := range r.Header {
		if routing.HasUnderscore(k) {
			delete(r.Header, k)
		}
	}
	// No trailer fields either: they come after the headers were decided
	// on (the fasthttp gateway, like nginx, forwards none).
	r.Trailer = nil
	r.Header.Del("Trailer")
}

// forwardedPrefix is the X-Forwarded-Prefix for r: "/<app>" as the client
// wrote it, after the prefix a trusted proxy in front sent (one from an
// untrusted client is replaced).
func forwardedPrefix(r *http.Request, app string) string {
	prefix := "/" + app
	if trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool); trusted {
		if before := strings.TrimRight(r.Header.Get("X-Forwarded-Prefix"), "/"); before != "" {
			prefix = before + prefix
		}
	}
	return prefix
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Gateway)(nil)
	_ caddyhttp.MiddlewareHandler = (*Gateway)(nil)
)
