// Package registry is a Eureka-compatible service registry: the Store that
// keeps leases, status overrides and the change log with Eureka's exact
// rules, and the REST API that Eureka clients speak, as one
// transport-neutral core with a net/http and a fasthttp front door.
//
// Unlike Eureka's server, which serves reads from a cache refreshed every
// 30 s, every read reflects every completed write. Serialized payloads are
// still cached, per format, and rebuilt only after a change.
//
// The package imports neither fx nor Caddy: construct a Store with New, an
// API with NewAPI, and mount NewHTTPHandler or FastHTTPHandler.
package registry
