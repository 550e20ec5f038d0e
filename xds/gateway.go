package xds

import (
	"slices"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// GatewayRoutes is the name of the route configuration for Envoy as an
// edge gateway: a listener of Envoy's reading it over RDS (see the
// bootstrap in docs/grpc-and-envoy.md) sends /orders/... to ORDERS'
// cluster as /..., the app's name matched in any case, as our own
// gateways do; a path naming no app gets Envoy's 404.
const GatewayRoutes = "eureka_gateway"

// gatewayRoutes is the edge gateway's routes over apps: two per app
// (/orders and /orders/...), rebuilt when an app comes or goes, never for
// a change to an app's instances.
func gatewayRoutes(apps []string) *routev3.RouteConfiguration {
	slices.Sort(apps)
	routes := make([]*routev3.Route, 0, 2*len(apps))
	for _, app := range apps {
		prefix := "/" + strings.ToLower(app)
		to := &routev3.Route_Route{Route: &routev3.RouteAction{
			ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: app},
			PrefixRewrite:    "/",
		}}
		routes = append(routes,
			&routev3.Route{Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: prefix + "/"}, CaseSensitive: wrapperspb.Bool(false)}, Action: to},
			&routev3.Route{Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Path{Path: prefix}, CaseSensitive: wrapperspb.Bool(false)}, Action: to},
		)
	}
	return &routev3.RouteConfiguration{
		Name:         GatewayRoutes,
		VirtualHosts: []*routev3.VirtualHost{{Name: GatewayRoutes, Domains: []string{"*"}, Routes: routes}},
	}
}

// updateGateway replaces the gateway's routes when the apps changed.
func (s *Server) updateGateway() {
	apps := make([]string, 0, len(s.known))
	for app := range s.known {
		apps = append(apps, app)
	}
	// The error is a resource's failure to marshal, which these cannot have.
	_ = s.rds.UpdateResources(map[string]types.Resource{GatewayRoutes: gatewayRoutes(apps)}, nil)
}
