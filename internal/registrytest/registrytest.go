// Package registrytest runs our registry server (package httpapi) over a
// Store on loopback, for the tests of what reads and writes a registry
// over HTTP: the discovery client, the remote region feeds, the fx and
// Caddy modules, the README's snippets and the interoperability tests.
package registrytest

import (
	"context"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// stopWithin is how long Stop lets requests in flight finish.
const stopWithin = 5 * time.Second

// Server is our registry server over a Store, serving until the test ends
// or Stop.
type Server struct {
	// Store is the registry it serves.
	Store *registry.Store
	// Addr is the host:port it listens on.
	Addr string

	srv *httpapi.Server
}

// Start serves store behind the REST API (with the default APIConfig)
// with cfg: cfg.Addr "127.0.0.1:0" for a free port, or a known address to
// start again where a stopped server was; cfg.TLS for HTTPS. The test
// fails if it cannot listen, and the server stops when the test ends.
func Start(t testing.TB, store *registry.Store, cfg httpapi.ServerConfig) *Server {
	t.Helper()
	srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{}), cfg)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{Store: store, Addr: srv.Addr().String(), srv: srv}
	t.Cleanup(s.Stop)
	return s
}

// Stop stops the server gracefully, letting requests in flight finish for
// a few seconds at most. A stopped server stays stopped.
func (s *Server) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), stopWithin)
	defer cancel()
	s.srv.Stop(ctx)
}

// URL is the server's service URL over plain HTTP,
// http://host:port/eureka/.
func (s *Server) URL() string { return "http://" + s.Addr + "/eureka/" }
