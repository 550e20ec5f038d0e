// Package registry is a Eureka-compatible service registry: the Store that
// keeps leases, status overrides, self-preservation and the change log
// with Eureka's exact rules (protocol doc section 4), and what is derived
// from its change stream: per-app instance views for routing and the
// cache of serialized documents that reads are served from (Documents),
// which package registry/document renders and writes.
//
// Every write that changes what a read returns records one Change with the
// next version. The changes are delivered in order, after the write lock
// is released, to the Store's own consumers (views, counters, logs) and to
// subscribers (Subscribe: peer replication, a dashboard), and they wake
// watchers (Poll, the long poll every server of one uses).
// Heartbeats are not changes; OnHeartbeat hears of them.
//
// Unlike Eureka's server, which serves reads from a cache refreshed every
// 30 s, every read reflects every completed write.
//
// The package has no transport: the REST API and its HTTP front doors
// (with the admission of large documents' writes) are in registry/httpapi,
// peer replication in registry/replication, and the Prometheus metrics,
// over Stats, in registry/metrics. It imports neither fx nor
// Caddy: construct a Store with New and call Start.
package registry
