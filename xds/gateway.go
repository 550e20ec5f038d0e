package xds

import (
	"regexp"
	"slices"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// GatewayRoutes is the name of the route configuration for Envoy as an
// edge gateway: a listener of Envoy's reading it over RDS (see the
// bootstrap in docs/grpc-and-envoy.md) sends /orders/... to ORDERS'
// cluster as /..., the app's name matched in any case, as our own
// gateways do; a path naming no app gets Envoy's 404. An app's traffic
// rules (SetRules) are its routes here as on its gRPC listeners, over
// the same subset clusters; rules refused for xDS are refused here too,
// and the app's requests go to its whole cluster.
const GatewayRoutes = "eureka_gateway"

// gatewayRoutes is the edge gateway's routes over apps: for each app,
// its rules' routes (rulesOf), else one to its whole cluster, each twice
// (/orders/... and /orders). They are rebuilt when an app comes or goes
// or the rules change, never for a change to an app's instances.
func gatewayRoutes(apps []string, rulesOf func(app string) []*routev3.Route) *routev3.RouteConfiguration {
	slices.Sort(apps)
	routes := make([]*routev3.Route, 0, 2*len(apps))
	for _, app := range apps {
		prefix := "/" + strings.ToLower(app)
		rules := rulesOf(app)
		if rules == nil {
			rules = []*routev3.Route{{Match: &routev3.RouteMatch{}, Action: toCluster(app)}}
		}
		for _, r := range rules {
			routes = append(routes, edgeRoutes(prefix, r)...)
		}
	}
	return &routev3.RouteConfiguration{
		Name:         GatewayRoutes,
		VirtualHosts: []*routev3.VirtualHost{{Name: GatewayRoutes, Domains: []string{"*"}, Routes: routes}},
	}
}

// edgeRoutes are the edge routes of one of an app's routes: under the
// app's prefix, in any case, with the prefix removed. A rule's
// path_prefix is of the path the instance gets, matched case-sensitively
// as the gateways do: a matcher of the :path header after the app's
// segment, since the route's own prefix matches the app's name in any
// case; the path /orders, which the instance gets as /, holds for the
// path_prefix / only.
func edgeRoutes(prefix string, r *routev3.Route) []*routev3.Route {
	headers := r.Match.Headers
	bare := true // whether the path /orders meets r's conditions
	if p := r.Match.GetPrefix(); p != "" {
		headers = append(slices.Clip(headers), &routev3.HeaderMatcher{Name: ":path", HeaderMatchSpecifier: safeRegex("/[^/?]*" + regexp.QuoteMeta(p) + ".*")})
		bare = p == "/"
	}
	action := proto.Clone(r.GetRoute()).(*routev3.RouteAction)
	action.PrefixRewrite = "/"
	insensitive := wrapperspb.Bool(false)
	out := []*routev3.Route{{
		Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: prefix + "/"}, CaseSensitive: insensitive, Headers: headers},
		Action: &routev3.Route_Route{Route: action},
	}}
	if bare {
		out = append(out, &routev3.Route{
			Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Path{Path: prefix}, CaseSensitive: insensitive, Headers: r.Match.Headers},
			Action: &routev3.Route_Route{Route: action},
		})
	}
	return out
}

// rulesRoutes returns app's rules' routes, nil when it has none in force.
func (s *Server) rulesRoutes(app string) []*routev3.Route {
	if t := s.rulesFor(app); t != nil {
		return t.routes
	}
	return nil
}

// updateGateway replaces the gateway's routes. Its caller holds buildMu.
func (s *Server) updateGateway() {
	apps := make([]string, 0, len(s.known))
	for app := range s.known {
		apps = append(apps, app)
	}
	// The error is a resource's failure to marshal, which these cannot have.
	_ = s.rds.UpdateResources(map[string]types.Resource{GatewayRoutes: gatewayRoutes(apps, s.rulesRoutes)}, nil)
}

// rulesToGateway replaces the gateway's routes after the rules changed,
// once their subset clusters are built.
func (s *Server) rulesToGateway() {
	s.buildMu.Lock()
	defer s.buildMu.Unlock()
	s.updateGateway()
}
