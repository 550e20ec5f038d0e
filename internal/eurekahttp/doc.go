// Package eurekahttp is the module's one HTTP client for talking to Eureka
// servers: the discovery client's registration and fetches, a registry
// node's replication to its peers and its start-up sync.
//
// A Client sends one request to one server (a service URL such as
// http://user:pass@eureka-1:8761/eureka/) and returns its answer, whatever
// the status. It owns the conventions every Eureka caller needs:
//
//   - the path is relative to the service URL's base path ("apps/",
//     "apps/delta", "peerreplication/batch/");
//   - user info in the service URL is sent as basic auth and never appears
//     in errors;
//   - every request asks for JSON (Accept: application/json) and gzip
//     (Accept-Encoding: gzip); a body is sent as application/json;
//   - a gzip answer is decoded, and no answer, compressed or decoded, may
//     exceed Config.MaxBodySize (default 1 GiB, a million instances): a
//     larger one, such as a gzip bomb from a hostile server or peer, is an
//     error wrapping ErrBodyTooLarge that names the host's setting, and
//     decoding stops at the limit, so memory stays within a small multiple
//     of it;
//   - Client.Stream hands a large answer (a registry) to its reader as it
//     arrives, gzip-decoded, under the same limit, bounded by a deadline
//     for the whole read and a timeout on each wait for more bytes, so
//     that reading a million instances holds neither the plain document
//     nor a fixed 8 s to read it in;
//   - connect and read timeouts default to the Java client's 5 s and 8 s;
//     a context deadline, when earlier, bounds the request too.
//
// A Cluster sends each request to a list of servers with the Java client's
// failover rules (RetryableEurekaHttpClient): up to MaxServersPerRequest
// servers per request, sticking to the last server that answered, and
// quarantining a server that failed. Which statuses count as a failure
// depends on the request (see FailoverRule). ZonedServers.Order puts the
// servers in the Java resolver's order: the client's own zone first, each
// group shuffled; with ClusterConfig.Reorder, a Cluster renews that order
// every 10 to 30 minutes, as a Java client's new session does.
//
// A registry peer is one server without failover: call Client.Do with its
// service URL. Clients and Clusters are safe for concurrent use.
package eurekahttp
