package caddymodule

import (
	"net"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/caddyauth"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"go.uber.org/zap"
)

// noteServed records that handler (eureka_server or eureka_dashboard) of
// this config is served by the HTTP server being provisioned, so that
// Start can check how that server is exposed.
func (a *App) noteServed(ctx caddy.Context, handler string, h caddyhttp.MiddlewareHandler) {
	srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if !ok {
		return
	}
	a.servedMu.Lock()
	defer a.servedMu.Unlock()
	if a.served == nil {
		a.served = map[*caddyhttp.Server][]servedBy{}
	}
	a.served[srv] = append(a.served[srv], servedBy{handler, h})
}

// servedBy is a handler of the registry in a server: its name and itself.
type servedBy struct {
	name    string
	handler caddyhttp.MiddlewareHandler
}

// warnExposed logs one warning per HTTP server that serves the registry
// (its REST API or its dashboard) on an address beyond loopback with no
// authentication on the way to it (authenticatesBefore): anyone who reaches it could
// register and cancel instances, as the standalone server warns.
func (a *App) warnExposed() {
	a.servedMu.Lock()
	defer a.servedMu.Unlock()
	for srv, served := range a.served {
		exposed := beyondLoopback(srv.Listen)
		if len(exposed) == 0 || tlsAuthenticates(srv) {
			continue
		}
		var handlers []string // those no authentication is on the way to
		for _, s := range served {
			if !authenticatesBefore(srv.Routes, s.handler) && !slices.Contains(handlers, s.name) {
				handlers = append(handlers, s.name)
			}
		}
		if len(handlers) == 0 {
			continue
		}
		a.log.Warn("the registry is served beyond loopback without authentication: anyone who reaches it can register or cancel instances; put basic_auth (and TLS) in front of "+strings.Join(handlers, " and ")+", or bind the site to 127.0.0.1",
			zap.Strings("listen", exposed), zap.Strings("handlers", handlers))
	}
}

// beyondLoopback returns the listen addresses that accept connections from
// other machines: all interfaces (no host), or a host that is neither
// localhost nor a loopback IP. Unix sockets and file descriptors are
// local.
var beyondLoopback = func(listen []string) []string {
	var out []string
	for _, addr := range listen {
		na, err := caddy.ParseNetworkAddress(addr)
		if err != nil {
			out = append(out, addr) // unknown: say so rather than stay silent
			continue
		}
		if na.IsUnixNetwork() || na.IsFdNetwork() || strings.EqualFold(na.Host, "localhost") {
			continue
		}
		if ip := net.ParseIP(na.Host); ip != nil && ip.IsLoopback() {
			continue
		}
		out = append(out, addr)
	}
	return out
}

// tlsAuthenticates reports whether the server asks for TLS client
// certificates.
func tlsAuthenticates(srv *caddyhttp.Server) bool {
	for _, cp := range srv.TLSConnPolicies {
		if cp.ClientAuthentication != nil && cp.ClientAuthentication.Active() {
			return true
		}
	}
	return false
}

// routesAuthenticate reports whether routes hold an authentication at
// any depth: an authentication handler (basic_auth) or a forward_auth (a
// reverse_proxy that handles the response).
func routesAuthenticate(routes caddyhttp.RouteList) bool {
	for _, r := range routes {
		for _, h := range r.Handlers {
			switch h := h.(type) {
			case *caddyauth.Authentication:
				return true
			case *reverseproxy.Handler:
				if len(h.HandleResponse) > 0 {
					return true
				}
			case *caddyhttp.Subroute:
				if routesAuthenticate(h.Routes) {
					return true
				}
			}
		}
	}
	return false
}
