// Package xds serves the registry to Envoy and to gRPC clients with a
// built-in xDS resolver (grpc-go, grpc-java): an aggregated discovery
// service (ADS, xDS v3, both state-of-the-world and incremental) built on
// go-control-plane, fed by the Store's change stream.
//
// What it serves, per application (ORDERS):
//
//   - LDS: an API listener for each name a client asks for, in the case
//     it asks (`xds:///orders` asks for "orders", `xds:///Orders` for
//     "Orders"), made when first asked, whose route configuration is
//     inline (no separate RDS resource: a gRPC client asking for a route
//     name the server lacks waits for it, while a listener is answered at
//     once, found or not): every RPC goes to the cluster named as the
//     registry names the app (ORDERS).
//   - CDS: one EDS cluster per application, named as the registry names it
//     (upper case), with the balancer policy of Config.Policy and outlier
//     detection mirroring the gateways' passive ejection (3 consecutive
//     failures eject an instance for 30 s).
//   - EDS: the application's UP instances, HEALTHY, grouped by zone into
//     localities of the Store's region (see endpoints.go for the status
//     mapping, the port and the metadata).
//
// Traffic rules (Server.SetRules, the gateways' document) are the
// listeners' routes over a cluster per subset, "ORDERS/version=2.1"; an
// app whose rules xDS cannot express is refused for xDS with a reason
// (RulesRefused) and served as without rules.
//
// One change to the registry rebuilds the cluster and endpoints of the app
// it touches and nothing else: a client watching other apps gets nothing.
package xds
