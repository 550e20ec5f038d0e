package caddymodule

import (
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// checkAllowedHosts refuses allowed_hosts that are not hosts, or that
// nothing would apply: in remote mode the app serves no registry.
func (a *App) checkAllowedHosts() error {
	if len(a.AllowedHosts) == 0 {
		return nil
	}
	if len(a.Remote) > 0 {
		return errors.New("allowed_hosts is set with remote: the hosts are those eureka_server and eureka_dashboard answer, and in remote mode the app serves no registry")
	}
	if err := httpapi.ParseAllowedHosts(a.AllowedHosts); err != nil {
		return fmt.Errorf("allowed_hosts: %v", err)
	}
	return nil
}

// hostGuard is the HostGuard of eureka_server or eureka_dashboard in one
// HTTP server: made at the first request, when the server's routes are
// all provisioned, and only if the server listens on loopback only and
// nothing on the way to the handler authenticates (authenticatesBefore:
// another site's basic_auth in the same server does not count).
type hostGuard struct {
	srv     *caddyhttp.Server // nil: not in an HTTP server, no guard
	handler caddyhttp.MiddlewareHandler
	allowed []string
	log     *zap.Logger

	once  sync.Once
	guard *httpapi.HostGuard
}

func newHostGuard(ctx caddy.Context, app *App, handler caddyhttp.MiddlewareHandler) *hostGuard {
	srv, _ := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	return &hostGuard{srv: srv, handler: handler, allowed: app.AllowedHosts, log: ctx.Logger()}
}

// refused answers 403 to a request whose Host the guard refuses, and
// reports whether it did.
func (h *hostGuard) refused(w http.ResponseWriter, r *http.Request) bool {
	if h == nil { // a handler that was not provisioned
		return false
	}
	h.once.Do(h.make)
	if h.guard == nil || h.guard.Allows(r.Host) {
		return false
	}
	http.Error(w, h.guard.Refusal(r.Host), http.StatusForbidden)
	return true
}

func (h *hostGuard) make() {
	if h.srv == nil {
		return
	}
	if len(beyondLoopback(h.srv.Listen)) > 0 || tlsAuthenticates(h.srv) || authenticatesBefore(h.srv.Routes, h.handler) {
		if len(h.allowed) > 0 {
			h.log.Warn("allowed_hosts has no effect in this server: it listens beyond loopback or authenticates, and answers every Host",
				zap.Strings("listen", h.srv.Listen), zap.Strings("allowed_hosts", h.allowed))
		}
		return
	}
	var own []string
	for _, l := range h.srv.Listen {
		if na, err := caddy.ParseNetworkAddress(l); err == nil && na.Host != "" {
			own = append(own, na.Host)
		}
	}
	// The hosts were checked by Validate.
	h.guard, _ = httpapi.NewHostGuard(h.allowed, "the eureka app's allowed_hosts", own...)
}

// authenticatesBefore reports whether a request that reaches handler
// through routes may have passed an authentication on its way: in a route
// before handler's that does not end the request (a terminal route, such
// as another site of the server, either ends it or runs nothing of it),
// or before handler in its own route, at any depth. A handler not found
// counts as authenticated, so that no guard is made on a guess.
func authenticatesBefore(routes caddyhttp.RouteList, handler caddyhttp.MiddlewareHandler) bool {
	auth, found := authBefore(routes, handler)
	return auth || !found
}

func authBefore(routes caddyhttp.RouteList, handler caddyhttp.MiddlewareHandler) (auth, found bool) {
	for _, r := range routes {
		for i, h := range r.Handlers {
			inner := false
			if h == handler {
				inner = true
			} else if sub, ok := h.(*caddyhttp.Subroute); ok {
				var subAuth bool
				if subAuth, inner = authBefore(sub.Routes, handler); inner && subAuth {
					return true, true
				}
			}
			if inner {
				return auth || routesAuthenticate(caddyhttp.RouteList{{Handlers: r.Handlers[:i]}}), true
			}
		}
		if !r.Terminal && routesAuthenticate(caddyhttp.RouteList{r}) {
			auth = true
		}
	}
	return auth, false
}
