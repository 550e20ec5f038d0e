// Package httpapi is the Eureka REST API over a registry.Store (protocol
// doc sections 1 and 2): the routes, one transport-neutral core (API,
// Request, Response), basic auth, a net/http front door (NewHTTPHandler,
// which Caddy's eureka_server handler mounts) and a fasthttp one
// (FastHTTPHandler), and the standalone fasthttp Server.
//
// The peer replication endpoint decodes and applies batches with
// registry/replication.
package httpapi
