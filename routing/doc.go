// Package routing holds what every gateway of this module decides alike
// about a request before it picks an instance: which application the
// request names and the path it goes on with, and whether the request is
// well-formed enough to be forwarded at all.
//
// Caddy's eureka_gateway and the fasthttp gateway (its fasthttp path and
// its event loops) call the same functions here, so that a front proxy or
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
// The package has no I/O and no HTTP library import: it reads bytes.
package routing
