package routing

import "github.com/eurekagate/eurekagate/balancer"

// GatewayHeaders are the request headers (canonical) the gateways set for
// the instance in place of a client's, or pass from a trusted proxy only:
// X-Forwarded-For, -Proto, -Host and -Prefix, the ClientClaims, the
// route and region headers, and the request id (kept from a trusted
// proxy, else replaced). It is the one list both the gateways' header scan
// and the traffic rules' refusal read, so a header the gateway owns is
// never one a rule may match on.
var GatewayHeaders = func() (h [4 + len(ClientClaims) + 3]string) {
	n := copy(h[:], []string{"X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-Prefix"})
	n += copy(h[n:], ClientClaims[:])
	copy(h[n:], []string{balancer.RouteHeader, RegionHeader, RequestIDHeader})
	return h
}()
