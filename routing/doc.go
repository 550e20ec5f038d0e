// Package routing is the routing core of this module's gateways: every
// decision about a request, taken once for Caddy's eureka_gateway, the
// fasthttp gateway and its event loops, which are transports around it
// (they carry the bytes and report the outcomes).
//
// A Router answers, for a request's target: which application it names,
// the path the instance gets, the instances that may take it (UP, passing
// their active health check, at their plain port or, when none enables
// that, their secure port over TLS) or the 503 answer and its reason, in
// the client's spelling of the application. Router.Retry gives the
// request's attempts (balancer.Retry): an instance not tried yet each
// time, and after a failure whether another instance gets the request:
// always after a refused connection, which never reached the instance;
// after a timeout or a broken connection only when the request may be
// sent twice (an idempotent method, RFC 9110 section 9.2.2, with its body
// none or in memory, MaxReplayBody), since the instance may have acted on
// it. Failed is the 502 or 504 answer after that. The trusted-proxy rule
// and X-Forwarded-Prefix are here too (AppendPrefix), and one default per
// setting (DefaultDialTimeout, DefaultResponseHeaderTimeout, ...), the
// same in Caddy, cmd/eureka and the Go API.
//
// A request is read the same way on every path, so that a front proxy or
// a WAF that reads a request the way nginx does sees it go where they do:
//
//   - The application is the first segment of the request's path, after
//     dot segments ("." and "..", percent-encoded or not) are resolved as
//     RFC 3986 section 5.2.4 says: /ADMIN/../ECHO/x names ECHO, with /x
//     as the rest. Leading slashes are skipped (//orders/x names ORDERS).
//   - Names are matched ASCII-case-insensitively (Eureka stores them in
//     ASCII upper case): no Unicode case folding, so /adm%C4%B1n (a dotless
//     i) names no ADMIN, and a segment with percent escapes names the
//     application spelled with them, which Eureka never registers.
//   - A request target with a fragment (#) or a malformed percent escape,
//     a Host that is not a host[:port], a protocol other than HTTP/1.0 or
//     HTTP/1.1, a header line folded onto the previous one (obs-fold) or a
//     field name that is not a token is refused (400, or 505 for the
//     protocol), as nginx refuses it.
//
// Traffic rules (Rules, ParseRules; Config.Rules, Router.SetRules) send a
// request to a subset of its application's instances by their metadata:
// by conditions on the request (header, cookie, query, path prefix,
// method, client address), weights and sticky keys, with a fallback when
// the subset is empty. Router.Select takes that decision; Route calls it.
// The transports tell the instance the subset in balancer.RouteHeader,
// which a trusted proxy may also send.
// A rules document is read within RulesLimits (its size, rules and
// regular expressions; YAML aliases refused), and a regex condition
// tests at most MaxRegexValue bytes of a value.
//
// The package has no HTTP library import: it reads bytes and strings, and
// instances through balancer.Instancer. Its only I/O is reading a rules
// file (LoadRules, and RulesFile, which watches one). Route, Select and
// the attempts allocate nothing on the way to an instance.
package routing
