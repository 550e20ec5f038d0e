// Package gateway is a gateway that routes requests by application name,
// served by fasthttp: a transport around the routing core that Caddy's
// eureka_gateway shares (package routing), for deployments that want
// nginx's throughput more than Caddy's feature set (HTTP/2 and 3,
// matchers, middleware).
//
// A request for /<app>/<rest> is proxied to /<rest> on an UP instance of
// <app>, the name matched case-insensitively, the instances taken in turn
// (per-app round-robin through a balancer.Balancer, with passive health: an
// instance whose requests fail is skipped for a while). A request for an
// unknown application, one with no UP instance, or one whose instances all
// fail their active health check (a Balancer with a Checker) is answered
// 503 with a short plain-text reason naming it. An application whose
// instances enable only their secure port is reached over TLS on it
// (Config.TLS for its certificate authority). The instances are read per
// request, without a lock or I/O, from any balancer.Instancer: a
// registry.Store in the same process, or a discovery.Client's copy of a
// remote registry.
//
// It is a proxy in full:
//
//   - Hop-by-hop headers (RFC 9110 section 7.6.1: Connection and the headers
//     it names, Keep-Alive, Proxy-Connection, Proxy-Authenticate,
//     Proxy-Authorization, TE, Trailer, Transfer-Encoding, Upgrade) are
//     removed from requests and responses; fasthttp frames each body anew.
//   - X-Forwarded-For, X-Forwarded-Proto and X-Forwarded-Host are set
//     (every copy the client sent is replaced by one, unless it is one of
//     Config.TrustedProxies, whose values are kept and whose
//     X-Forwarded-For is appended to), and X-Forwarded-Prefix is /<app>.
//     Forwarded, X-Real-IP, X-Forwarded-Port, X-Forwarded-Ssl and
//     True-Client-IP pass from trusted proxies only; headers whose names
//     have an underscore, and request trailers, never pass.
//   - A request is read as nginx reads it (package routing): the app is
//     the first path segment once dot segments are resolved, matched
//     ASCII-case-insensitively; a malformed Host, target or header line
//     gets 400, a protocol other than HTTP/1.x 505; a Connection header
//     cannot remove Content-Length, Transfer-Encoding or Host.
//   - Host is passed through as the client sent it, as Caddy does (the
//     client's name for the service reaches it); Config.RewriteHost sends
//     the instance's host:port instead, as nginx does. The other headers of
//     the instance's response pass as it sent them (with a Date added if
//     it has none).
//   - Bodies are streamed both ways: a large upload or download costs a few
//     buffers, not its size. Request bodies are limited to
//     Config.MaxRequestBodySize (413 beyond it).
//   - Upstream dials and responses have timeouts (Config.DialTimeout,
//     Config.ResponseHeaderTimeout, Config.ResponseReadTimeout, with
//     package routing's defaults), and so does a client's request header
//     as a whole (ServerConfig.HeaderTimeout). After a failed dial, a
//     request is retried on another instance; after a timeout or a broken
//     connection, an idempotent request whose body is in memory is too.
//   - WebSocket and other Upgrade requests are tunnelled.
//   - Connections to each instance are pooled and kept alive; the pool of
//     an instance that leaves the registry (or stops being UP) is closed.
//   - Server.Stop stops accepting connections and lets in-flight requests
//     finish.
//
// Server serves the requests a gateway sees most (no body, no Upgrade,
// for a registered application at its plain port, answered with a body of
// known length up to 64 KiB) on event loops, gnet's, one per core: a loop reads a socket
// only when epoll says it has data and keeps its own connections to the
// instances, with no goroutine per connection, which is what brings the
// gateway to nginx's throughput. A connection that sends any other request
// goes on in fasthttp, through Handler, from then on; a longer, chunked
// or close-delimited response streams from a goroutine and both
// connections return to the loop. ServerConfig.Loops sets how many loops
// (negative for none).
//
// Use New for the handler, to mount in any fasthttp server, and NewServer
// to serve it on an address of its own; fxmodules.Gateway does both in an
// fx application, and cmd/eureka -gateway serves it beside the registry.
package gateway
