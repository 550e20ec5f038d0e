package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/eurekagate/eurekagate/registry/httpapi"
)

func init() {
	caddy.RegisterModule(new(Server))
}

// Server serves the Eureka REST API of the eureka app's registry, so that
// Spring Cloud, fargo and other Eureka clients register with Caddy: under
// /eureka/ and /eureka/v2/ (and Prefix), with Eureka's status codes and
// documents. It also answers /health, 200 when the registry serves reads
// (after a cluster node's start-up sync), for load balancers. Requests for
// other paths go to the next handler.
//
// It needs the eureka app to host the registry (not remote mode). Anyone
// who reaches it can register and cancel instances: served beyond
// loopback, put basic_auth (and TLS) in front of it. The eureka app logs a
// warning at start when a server that listens beyond loopback has no
// authentication. Writes must carry a JSON or XML content type, and a
// browser's writes the Eurekagate-CSRF header, which the dashboard sends.
type Server struct {
	// Prefix is a path the API is also served under, besides /eureka (for
	// example /registry). Default: none.
	Prefix string `json:"prefix,omitempty"`

	api     *httpapi.API
	handler http.Handler
	hosts   *hostGuard
}

// CaddyModule returns the Caddy module information.
func (*Server) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.eureka_server", New: func() caddy.Module { return new(Server) }}
}

// Provision finds the eureka app's registry.
func (s *Server) Provision(ctx caddy.Context) error {
	app, err := eurekaApp(ctx)
	if err != nil {
		return err
	}
	api, err := app.API(s.Prefix)
	if err != nil {
		return err
	}
	app.noteServed(ctx, "eureka_server", s)
	s.hosts = newHostGuard(ctx, app, s)
	s.api, s.handler = api, httpapi.NewHTTPHandler(api)
	// Watches held by this config end when its server starts shutting
	// down, so a reload does not wait for them; their clients re-watch on
	// the new config at once.
	if srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok {
		srv.RegisterOnShutdown(api.Close)
	}
	return nil
}

// Cleanup ends the watches still held.
func (s *Server) Cleanup() error {
	if s.api != nil {
		s.api.Close()
	}
	return nil
}

// ServeHTTP answers Eureka API requests and passes the others on. It is
// the API's net/http front door (httpapi.NewHTTPHandler), which maps
// requests and answers as the standalone server's fasthttp one does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if !s.api.Match(r.URL.EscapedPath()) {
		return next.ServeHTTP(w, r)
	}
	if s.hosts.refused(w, r) {
		return nil
	}
	s.handler.ServeHTTP(w, withClient(s.api, r))
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Server)(nil)
	_ caddy.CleanerUpper          = (*Server)(nil)
	_ caddyhttp.MiddlewareHandler = (*Server)(nil)
)
