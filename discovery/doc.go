// Package discovery is a Eureka client: it registers an instance and keeps
// it alive with heartbeats, and keeps a local copy of the registry fresh
// with delta fetches, the way Spring Cloud's Java client does. It works
// against any Eureka server: Netflix's, Spring Cloud's or ours.
//
// Reads of the local copy (Instances, AllInstances, Applications) take no
// lock and never do I/O: they load an immutable snapshot that the fetch
// loop replaces after each change. Changed tells a balancer or gateway
// when that happens, and LastFetch whether the servers still answer.
//
// With FetchRemoteRegions the client also fetches the instances of other
// regions, as Java's fetchRemoteRegionsRegistry does, and keeps them apart
// from the local region's: the reads above answer the local region,
// InstancesIn any region.
//
// All HTTP goes through fasthttp. The package imports neither fx nor Caddy:
// construct a Client with New and call Start and Stop.
package discovery
