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
// all provisioned (an authentication handler after this one counts), and
// only if the server listens on loopback only and authenticates nothing.
type hostGuard struct {
	srv     *caddyhttp.Server // nil: not in an HTTP server, no guard
	allowed []string
	log     *zap.Logger

	once  sync.Once
	guard *httpapi.HostGuard
}

func newHostGuard(ctx caddy.Context, app *App) *hostGuard {
	srv, _ := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	return &hostGuard{srv: srv, allowed: app.AllowedHosts, log: ctx.Logger()}
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
	if len(beyondLoopback(h.srv.Listen)) > 0 || authenticates(h.srv) {
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
