package caddymodule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"go.uber.org/zap"
	"golang.org/x/net/http/httpguts"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
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
// Where a request goes is decided by package routing, which the fasthttp
// gateway (cmd/eureka -gateway) shares, so both answer alike; the
// gateway's own transport (Transport) carries each attempt to the
// instance routing picks.
//
// Instances are reached on their plain port. An application none of whose
// instances enables it, but that enables the secure port, is reached over
// HTTPS on the secure port, its certificates verified against the system's
// roots or TLSTrustedCACerts.
//
// Failures have the instance skipped (passive health): a connection
// refused or not made within DialTimeout, response headers not received
// within ResponseHeaderTimeout, and a connection reset count as failures,
// and with MaxFails 1 an instance is skipped from its first failure for
// FailDuration (a timeout has it skipped at once, whatever MaxFails). A
// hung instance thus gets no new request after its first timeout. The
// failed request goes to another instance (Retries): always after a
// failed connection, which sent nothing, and after a timeout or a reset
// when its method is idempotent (GET, HEAD, OPTIONS, TRACE, PUT, DELETE,
// RFC 9110 section 9.2.2, as nginx retries them) and its body is none or
// at most 64 KiB, which the gateway holds to send again; a POST or PATCH
// the instance may have acted on is not sent twice. A request failed for
// good is answered 502 (504 after a timeout) with a plain-text reason. A
// client that gives up before a timeout is not a failure of the
// instance. With the eureka app's health_interval, instances failing
// their active health check are skipped too.
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
	// ReadTimeout is the longest an instance may stay silent while its
	// response body streams (transport http read_timeout), as nginx's
	// proxy_read_timeout. Default: 60s.
	ReadTimeout caddy.Duration `json:"read_timeout,omitempty"`
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
	// The traffic rules: which subset of an application's instances takes
	// a request. The instance is told in X-Eurekagate-Route. Default:
	// none, any instance.
	TrafficRules
	// RequestID leaves each request one X-Request-Id for the instance:
	// the client's when it comes from one of the server's trusted_proxies,
	// or is 20 to 200 characters of [A-Za-z0-9+=/-]
	// (routing.KeepRequestID); else, and when there is none, a new one
	// (32 hex digits). Default: true. false leaves the header as it came.
	RequestID *bool `json:"request_id,omitempty"`
	// FailoverRegions are the eureka app's remote regions, in order, that
	// take an app's requests when its local region has no instance that
	// can take them; the local region takes them back as soon as it has
	// one. Default: none, the local region only.
	FailoverRegions []string `json:"failover_regions,omitempty"`
	// Transport is what carries each attempt to its instance: "eureka",
	// the gateway's own (connections kept alive per instance over
	// HTTP/1.1, the headers, bodies, TLS, tunnels and timeouts as
	// reverse_proxy has them), or "reverse_proxy", an embedded
	// reverse_proxy per attempt, slower (see docs/gateway.md). Default:
	// eureka.
	Transport string `json:"transport,omitempty"`

	router      *routing.Router
	traffic     *traffic.Recorder
	noRequestID bool
	log         *zap.Logger
	// The gateway's own transport (nil with transport reverse_proxy),
	// and the embedded reverse_proxy handlers (with the own transport,
	// for extended CONNECT only: ownsAttempts), by [secure][upgrade]: to
	// the plain or the secure ports (over TLS), and for Upgrade requests
	// (WebSockets), whose tunnels may stay quiet as long as they like,
	// without read_timeout.
	own     *ownTransport
	proxies [2][2]*reverseproxy.Handler
}

// forwardedPrefix is the X-Forwarded-Prefix header's canonical name.
const forwardedPrefix = "X-Forwarded-Prefix"

// dialVar is the request variable that holds the address of the instance
// routing picked for an attempt, which the embedded reverse_proxy dials.
const dialVar = "eureka.dial"

// CaddyModule returns the Caddy module information.
func (*Gateway) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.eureka_gateway", New: func() caddy.Module { return new(Gateway) }}
}

// Provision fills in defaults, makes the router and sets up the embedded
// reverse_proxy.
func (g *Gateway) Provision(ctx caddy.Context) error {
	app, err := eurekaApp(ctx)
	if err != nil {
		return err
	}
	g.log = ctx.Logger()
	cfg, err := g.routerConfig()
	if err != nil {
		return err
	}
	g.TrafficRules.shared = app.shared
	if cfg.Rules, err = g.TrafficRules.load("eureka_gateway"); err != nil {
		return err
	}
	cfg.Instances, cfg.Health = app.entry.instances, app.checker
	if err := checkFailoverRegions(g.FailoverRegions, app.entry.store); err != nil {
		return err
	}
	g.traffic = app.entry.traffic
	g.noRequestID = g.RequestID != nil && !*g.RequestID
	cfg.Balancer = app.entry.gatewayBalancer(cfg.MaxFails, cfg.FailDuration)
	// The breakers' moves logged and counted; the counters outlive a
	// reload, and the new router's breakers start closed.
	cfg = (&gateway.BreakerEvents{Log: g.log, Traffic: g.traffic}).Hook(cfg)
	g.traffic.BreakersClosed()
	if g.router, err = routing.New(cfg); err != nil {
		return err
	}
	if g.Transport != transportReverseProxy {
		if g.own, err = newOwnTransport(g.router.Config(), g.TLSTrustedCACerts); err != nil {
			return err
		}
	}
	register(app.entry, g.router) // the dashboard shows its rules
	// The reverse_proxy handlers, with either transport: they carry the
	// WebSockets of HTTP/2 and HTTP/3 clients (see ownsAttempts).
	for secure := range 2 {
		for upgrade := range 2 {
			raw, err := g.proxyConfig(g.router.Config(), secure == 1, upgrade == 1)
			if err != nil {
				return err
			}
			// Caddy cleans up modules loaded through ctx with the config.
			mod, err := ctx.LoadModuleByID("http.handlers.reverse_proxy", raw)
			if err != nil {
				return fmt.Errorf("loading reverse_proxy: %v", err)
			}
			g.proxies[secure][upgrade] = mod.(*reverseproxy.Handler)
		}
	}
	return nil
}

// routerConfig checks the settings and returns them as the router's,
// defaults filled in but the registry's parts.
func (g *Gateway) routerConfig() (routing.Config, error) {
	if err := g.check(); err != nil {
		return routing.Config{}, err
	}
	retries := routing.DefaultRetries
	if g.Retries != nil {
		if retries = *g.Retries; retries == 0 {
			retries = -1 // off
		}
	}
	cfg := routing.Config{
		Retries:               retries,
		DialTimeout:           time.Duration(g.DialTimeout),
		ResponseHeaderTimeout: time.Duration(g.ResponseHeaderTimeout),
		ReadTimeout:           time.Duration(g.ReadTimeout),
		FailDuration:          time.Duration(g.FailDuration),
		MaxFails:              g.MaxFails,
		FailoverRegions:       g.FailoverRegions,
	}
	return cfg.WithDefaults(), nil
}

// checkFailoverRegions refuses fail-over regions the registry does not
// serve: a hosted one's remote_regions (a registry in remote mode serves
// none).
func checkFailoverRegions(names []string, store *registry.Store) error {
	if len(names) == 0 {
		return nil
	}
	var served []string
	if store != nil {
		served = regions.MirrorOf(store).Names()
	}
	for _, r := range names {
		if !slices.Contains(served, strings.ToLower(r)) {
			return fmt.Errorf("failover_regions: %q is not one of the eureka app's remote_regions %v: add it there, or remove it here", r, served)
		}
	}
	return nil
}

// check refuses settings out of range, saying how to fix them. The
// Caddyfile checks lb_retries and max_fails as it reads them, with the
// same rules.
func (g *Gateway) check() error {
	if g.Retries != nil {
		if err := checkRetries(*g.Retries); err != nil {
			return err
		}
	}
	if err := checkTransport(g.Transport); err != nil {
		return err
	}
	if g.MaxFails != 0 { // 0: unset
		if err := checkMaxFails(g.MaxFails); err != nil {
			return err
		}
	}
	switch {
	case g.DialTimeout < 0:
		return checkDuration("dial_timeout", time.Duration(g.DialTimeout), false)
	case g.ReadTimeout < 0:
		return checkDuration("read_timeout", time.Duration(g.ReadTimeout), false)
	case g.FailDuration < 0:
		return checkDuration("fail_duration", time.Duration(g.FailDuration), false)
	}
	return nil
}

// checkRetries refuses an lb_retries out of range.
func checkRetries(n int) error {
	if n < 0 {
		return fmt.Errorf("lb_retries %d must not be negative; 0 turns retries off", n)
	}
	return nil
}

// checkMaxFails refuses a max_fails out of range.
func checkMaxFails(n int) error {
	if n < 1 {
		return fmt.Errorf("max_fails %d must be at least 1 (the default)", n)
	}
	return nil
}

// proxyConfig returns the JSON config of the embedded reverse_proxy to the
// plain ports, or to the secure ones: one attempt to the address routing
// picked, with the router's timeouts (no read timeout for an upgrade, as
// the fasthttp gateway's tunnels), and neither retries nor passive health
// of its own (routing keeps both).
func (g *Gateway) proxyConfig(cfg routing.Config, secure, upgrade bool) ([]byte, error) {
	transport := map[string]any{"protocol": "http", "dial_timeout": caddy.Duration(cfg.DialTimeout)}
	if !upgrade {
		transport["read_timeout"] = caddy.Duration(cfg.ReadTimeout)
	}
	if cfg.ResponseHeaderTimeout > 0 {
		transport["response_header_timeout"] = caddy.Duration(cfg.ResponseHeaderTimeout)
	}
	if secure {
		tls := map[string]any{}
		if len(g.TLSTrustedCACerts) > 0 {
			tls["ca"] = map[string]any{"provider": "file", "pem_files": g.TLSTrustedCACerts}
		}
		transport["tls"] = tls
	}
	return json.Marshal(map[string]any{
		"upstreams": []map[string]any{{"dial": "{http.vars." + dialVar + "}"}},
		"transport": transport,
	})
}

// ServeHTTP proxies /<app>/<rest> to an instance of <app>, as routing
// decides.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if reason := routing.CheckHost(r.Host); reason != "" {
		// Go lets more through than a host[:port] ("[::1", "a:1:2").
		return plainAnswer(w, routing.Answer{Status: http.StatusBadRequest, Reason: reason + "\n"})
	}
	// The path as the client wrote it: RawPath when it differs from
	// Path's default escaping (EscapedPath would give the escaping of the
	// decoded path instead, were RawPath to hold a character such as "{").
	target := r.URL.RawPath
	if target == "" {
		target = r.URL.EscapedPath()
	}
	var targetBuf, buf [512]byte
	t := append(targetBuf[:0], target...)
	if r.URL.RawQuery != "" {
		t = append(append(t, '?'), r.URL.RawQuery...) // the rules read the query
	}
	rr := ruleRequest(r)
	rt, appName, appPath := g.router.Route(buf[:0], t, &rr)
	if i := bytes.IndexByte(appPath, '?'); i >= 0 {
		appPath = appPath[:i] // the query stays in r.URL.RawQuery
	}
	if rt.Other {
		return next.ServeHTTP(w, r)
	}
	g.router.Limit(&rt, &rr)
	x := newExchange(w)
	o, sw := &x.obs, &x.w
	g.observe(o, &rt, r)
	// Ended however proxy returns: reverse_proxy panics with
	// http.ErrAbortHandler when a response breaks after its header, and
	// an observation left open would hold its app's in-flight count, its
	// retry budget's place and a half-open breaker's probe for good.
	err := errAborted
	defer func() { o.done(r, sw.status, err) }()
	err = g.proxy(x, r, next, &rt, rr.Trusted, target, appName, appPath)
	if err == errAborted {
		panic(http.ErrAbortHandler) // the client must see the response broke
	}
	return err
}

// proxy sends a routed request to the route's instances (or answers it);
// trusted says its client is one of the server's trusted_proxies, target
// is its path as the client wrote it.
func (g *Gateway) proxy(x *exchange, r *http.Request, next caddyhttp.Handler, rt *routing.Route, trusted bool, target string, appName, appPath []byte) error {
	w, o := &x.w, &x.obs
	if rt.Answer.Status != 0 {
		if rt.Limit.Over() || rt.Limit.Open() {
			rt.Limit.Headers(w.Header().Set)
		}
		return plainAnswer(w, rt.Answer)
	}
	rest := tailOf(target, appPath)
	if reason := routing.CheckTarget(rest); reason != "" {
		// Go's server lets none through; checked all the same.
		return plainAnswer(w, routing.Answer{Status: http.StatusBadRequest, Reason: reason + "\n"})
	}
	path, _ := url.PathUnescape(rest)
	upgrade := isUpgrade(r)
	caddyhttp.SetVar(r.Context(), serviceVar, rt.App)
	dropClaims(r, trusted)
	setRoute(r.Header, rt.Subset, &x.vals)
	setRegion(r.Header, rt.Region, &x.vals)
	if !g.noRequestID {
		setRequestID(r.Header, trusted, &x.vals)
	}
	prior, _ := httpFields(r.Header).Field(forwardedPrefix)
	x.vals.put(r.Header, forwardedPrefix, prefixValue(target, prior, trusted, appName))
	if g.ownsAttempts(r) {
		prepareOutgoing(r, trusted, upgrade, &x.vals)
	}
	r.URL.Path, r.URL.RawPath = path, ""
	if r.URL.EscapedPath() != rest {
		r.URL.RawPath = rest
	}
	body, resend, err := replayBody(r)
	if err != nil {
		return plainAnswer(w, routing.Incomplete())
	}
	if body != nil {
		defer replayPool.Put(body)
	}
	try := g.router.Retry(rt, resend)
	for {
		inst := try.Next()
		o.attempt(inst)
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body.Bytes()))
		}
		err := g.carry(w, r, &x.vals, next, rt.Secure, upgrade, balancer.Address(inst, rt.Secure))
		if err == nil {
			try.Succeeded()
			return nil
		}
		if w.wrote() {
			return err // the response began: it cannot go elsewhere
		}
		f, ok := failureOf(err)
		if !ok || r.Context().Err() != nil {
			return err // not the instance's failure
		}
		g.log.Info("instance failed", zap.String("app", rt.App), zap.String("instance", inst.ID()),
			zap.Int("attempt", try.Attempt()), zap.Error(err))
		again := try.Failed(f)
		o.Failed(f, again)
		if !again {
			return plainAnswer(w, routing.Failed(string(appName), f))
		}
	}
}

// carry is one attempt, to the instance at addr, by the configured
// transport; r's header fields are its header's and vals' pending ones
// (none when reverse_proxy carries it, see headerValues).
func (g *Gateway) carry(w *statusWriter, r *http.Request, vals *headerValues, next caddyhttp.Handler, secure, upgrade bool, addr string) error {
	if g.ownsAttempts(r) {
		return g.own.attempt(w, r, vals, secure, upgrade, addr)
	}
	caddyhttp.SetVar(r.Context(), dialVar, addr)
	return g.proxies[b2i(secure)][b2i(upgrade)].ServeHTTP(w, r, next)
}

// ownsAttempts reports whether the gateway's own transport carries r's
// attempts: with transport eureka, all but an extended CONNECT (a
// WebSocket of an HTTP/2 or HTTP/3 client, RFC 8441), which
// reverse_proxy turns into an HTTP/1.1 Upgrade for the instance.
func (g *Gateway) ownsAttempts(r *http.Request) bool {
	return g.own != nil && r.Method != http.MethodConnect
}

// Cleanup takes the gateway's router off the dashboard's rules when its
// config is unloaded, and closes its transport's idle connections and
// tunnels.
func (g *Gateway) Cleanup() error {
	unregister(g.router)
	if g.own != nil {
		g.own.close()
	}
	return nil
}

// isUpgrade reports whether r asks to switch protocols (a WebSocket).
func isUpgrade(r *http.Request) bool {
	return r.Header.Get("Upgrade") != "" && httpguts.HeaderValuesContainsToken(r.Header["Connection"], "upgrade")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Gateway)(nil)
	_ caddy.CleanerUpper          = (*Gateway)(nil)
	_ caddyhttp.MiddlewareHandler = (*Gateway)(nil)
)
