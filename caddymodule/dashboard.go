package caddymodule

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/eurekagate/eurekagate/dashboard"
	"github.com/eurekagate/eurekagate/routing"
)

func init() {
	caddy.RegisterModule(new(Dashboard))
}

// Dashboard serves the registry's web dashboard: the registry live
// (instances, self-preservation, peers), with operator actions that go
// through the Eureka REST API of eureka_server, and the traffic rules of
// the eureka_gateway handlers routing to the same registry (those of the
// gateway provisioned last that has rules), with the instances of each
// subset, and their traffic live (requests per second, 5xx share, latency
// per app and instance) while at least one eureka_gateway routes to the
// registry. Requests outside Path go to the next handler. Protect it, and
// eureka_server, with basic_auth when the registry is reachable from a
// network; the eureka app warns at start when it is served beyond
// loopback without authentication.
type Dashboard struct {
	// Path is where the dashboard is served. Default: "/".
	Path string `json:"path,omitempty"`
	// APIPrefix is where eureka_server serves the REST API that the
	// dashboard's actions use. Default: "/eureka".
	APIPrefix string `json:"api_prefix,omitempty"`

	handler *dashboard.Handler
	path    string
	hosts   *hostGuard
}

// CaddyModule returns the Caddy module information.
func (*Dashboard) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.eureka_dashboard", New: func() caddy.Module { return new(Dashboard) }}
}

// Provision finds the eureka app's registry.
func (d *Dashboard) Provision(ctx caddy.Context) error {
	app, err := eurekaApp(ctx)
	if err != nil {
		return err
	}
	store := app.Store()
	if store == nil {
		return fmt.Errorf("the eureka app is in remote mode: it hosts no registry to show")
	}
	app.noteServed(ctx, "eureka_dashboard", d)
	d.hosts = newHostGuard(ctx, app, d)
	d.path = d.Path
	if d.path == "" {
		d.path = "/"
	}
	if !strings.HasSuffix(d.path, "/") {
		d.path += "/"
	}
	e := app.entry
	d.handler = dashboard.New(store, dashboard.Config{Path: d.path, APIPrefix: d.APIPrefix,
		Rules:   func() *routing.Rules { return rulesOf(e) },
		Traffic: e.traffic, TrafficLive: func() bool { return hasGateway(e) }, Health: gatewaysOut{e}, XDS: app.dashboardXDS(),
		Permissions: app.dashboardPermissions()})
	d.handler.Start()
	return nil
}

// hasGateway reports whether an eureka_gateway routes to e's registry
// (its router is registered), and so records into e.traffic: the
// dashboard shows the traffic panel only then.
func hasGateway(e *entry) bool {
	gatewayRouters.mu.Lock()
	defer gatewayRouters.mu.Unlock()
	return len(gatewayRouters.byEntry[e]) > 0
}

// Cleanup stops the dashboard's chart sampler, ends its long polls and
// unsubscribes it from the registry, when the config is unloaded.
func (d *Dashboard) Cleanup() error {
	if d.handler != nil {
		d.handler.Close()
	}
	return nil
}

// ServeHTTP serves the dashboard under Path.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if !strings.HasPrefix(r.URL.Path, d.path) && r.URL.Path+"/" != d.path {
		return next.ServeHTTP(w, r)
	}
	if d.hosts.refused(w, r) {
		return nil
	}
	d.handler.ServeHTTP(w, r)
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Dashboard)(nil)
	_ caddy.CleanerUpper          = (*Dashboard)(nil)
	_ caddyhttp.MiddlewareHandler = (*Dashboard)(nil)
)
