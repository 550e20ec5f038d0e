package caddymodule

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/eurekagate/eurekagate/registry/actuator"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

func init() {
	caddy.RegisterModule(new(Actuator))
}

// Actuator serves Spring Boot's actuator endpoints over the eureka app's
// registry, as a Spring Cloud Eureka Server answers them (docs/spring.md):
// /actuator/health with the registry's components, its liveness and
// readiness groups (readiness answers 503 OUT_OF_SERVICE until the
// start-up sync from the peers is done), /actuator/info and
// /actuator/prometheus (Caddy's metrics, the registry's among them), each
// only when exposed. Requests outside Path go to the next handler.
type Actuator struct {
	// Path is where the endpoints are served
	// (management.endpoints.web.base-path). Default: "/actuator".
	Path string `json:"path,omitempty"`
	// Exposure names the endpoints served (management.endpoints.web.
	// exposure.include): health, info, prometheus, or *. Default: health
	// alone, as Spring Boot's.
	Exposure []string `json:"exposure,omitempty"`
	// ShowDetails is who sees health's components: always, or never
	// (the status alone). Protect the site with basic_auth to keep them
	// from anonymous callers and show them to the rest. Default: always.
	ShowDetails string `json:"show_details,omitempty"`

	handler *actuator.Actuator
	path    string
	// api is the registry's API whose NotReady readiness reads, as the
	// registry's own /health does; closed at Cleanup.
	api *httpapi.API
}

// CaddyModule returns the Caddy module information.
func (*Actuator) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.eureka_actuator", New: func() caddy.Module { return new(Actuator) }}
}

// Provision finds the eureka app's registry and its peers.
func (a *Actuator) Provision(ctx caddy.Context) error {
	app, err := eurekaApp(ctx)
	if err != nil {
		return err
	}
	store := app.Store()
	if store == nil {
		return fmt.Errorf("the eureka app is in remote mode: it hosts no registry whose health to tell")
	}
	if a.api, err = app.API(""); err != nil {
		return err
	}
	cfg := actuator.Config{BasePath: a.Path, Exposure: a.Exposure, Store: store, NotReady: a.api.NotReady,
		Prometheus: promhttp.HandlerFor(ctx.GetMetricsRegistry(), promhttp.HandlerOpts{})}
	if p := app.entry.peers; p != nil {
		cfg.Peers = p
	}
	cfg.Degraded = app.redisHealth()
	switch a.ShowDetails {
	case "", "always":
	case "never":
		cfg.Details = func(*http.Request) bool { return false }
	default:
		return fmt.Errorf("eureka_actuator: show_details %q: always or never", a.ShowDetails)
	}
	if a.handler, err = actuator.New(cfg); err != nil {
		return fmt.Errorf("eureka_actuator: %w", err)
	}
	a.path = strings.TrimSuffix(a.handler.Path(), "/")
	return nil
}

// Cleanup closes the API readiness reads: from then on readiness is
// OUT_OF_SERVICE, as the registry's /health says.
func (a *Actuator) Cleanup() error {
	if a.api != nil {
		a.api.Close()
	}
	return nil
}

// ServeHTTP answers the paths under Path and hands the others on.
func (a *Actuator) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.URL.Path != a.path && !strings.HasPrefix(r.URL.Path, a.path+"/") {
		return next.ServeHTTP(w, r)
	}
	a.handler.ServeHTTP(w, r)
	return nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens:
//
//	eureka_actuator [<matcher>] {
//		path <path>
//		exposure <endpoint...>
//		show_details always|never
//	}
func (a *Actuator) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		var err error
		switch d.Val() {
		case "path":
			err = oneArg(d, &a.Path)
		case "exposure":
			a.Exposure = d.RemainingArgs()
			if len(a.Exposure) == 0 {
				err = d.ArgErr()
			}
		case "show_details":
			err = oneArg(d, &a.ShowDetails)
		default:
			err = d.Errf("unrecognized eureka_actuator option %q", d.Val())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

var (
	_ caddy.Provisioner           = (*Actuator)(nil)
	_ caddy.CleanerUpper          = (*Actuator)(nil)
	_ caddyhttp.MiddlewareHandler = (*Actuator)(nil)
	_ caddyfile.Unmarshaler       = (*Actuator)(nil)
)
