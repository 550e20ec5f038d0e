package xds

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"go.uber.org/zap"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/eurekagate/eurekagate/routing"
)

// appRoutes is one app's traffic rules translated to xDS: the routes of
// its listeners, and the subset clusters they send RPCs to.
type appRoutes struct {
	routes   []*routev3.Route
	subsets  map[string]*routing.Subset // by cluster name
	def      *routing.Subset
	fallback routing.Fallback
}

// SetRules serves rules (nil: none) to gRPC clients from now on, as the
// gateways apply them (routing.ParseRules): each subset a rule names is a
// cluster of its own, "ORDERS/version=2.1", whose endpoints are the
// app's UP instances the subset's selector selects (or, when it has none,
// those of the app's fallback: the default subset's, any instance's, or
// none, so that RPCs fail UNAVAILABLE as the gateways answer 503); each
// rule is a route of the app's listeners, in order, whose header
// conditions are header matchers (equals: exact; in: a regex of the
// values; present, absent; regex: the expression matched anywhere in the
// value), whose path_prefix is the route's prefix (of the RPC's path,
// /package.Service/Method) and whose weights are weighted clusters,
// which a client picks at random per RPC in proportion (the gateways
// split exactly over each run of requests; a client's shares converge to
// the same).
//
// An app whose rules xDS cannot express as the gateways apply them is
// refused for xDS as a whole, since its rules are an order in which one
// rule left out would hand its requests to the next: its listeners route
// every RPC to the app's whole cluster, its refusal and the reason are
// logged once at Warn (Config.Logger), kept in RulesRefused and counted
// by the metric eureka_xds_rules_refused. Refused: cookie, query, method
// and client conditions (gRPC calls carry no cookie or query, all are
// POST, and grpc-go matches no client address), sticky keys (a client
// picks a weighted cluster per RPC, not by a key), headers grpc-go does
// not match (grpc-*, *-bin), and a subset of a remote region that is not
// one of Config.FailoverRegions.
func (s *Server) SetRules(rules *routing.Rules) {
	next := map[string]*appRoutes{}
	refused := map[string]string{}
	for _, app := range rules.Apps() {
		v, _ := rules.View(app)
		t, err := s.translate(app, v)
		if err != nil {
			refused[app] = err.Error()
			continue
		}
		next[app] = t
	}
	s.rulesMu.Lock()
	prev, prevRefused := s.rules, s.refused
	s.rules, s.refused = next, refused
	s.rulesMu.Unlock()
	for app, reason := range refused {
		if prevRefused[app] != reason {
			s.log.Warn("xds: traffic rules refused: the app's RPCs go to its whole cluster",
				zap.String("app", app), zap.String("reason", reason))
		}
	}
	affected := map[string]struct{}{}
	for _, m := range []map[string]*appRoutes{prev, next} {
		for app := range m {
			affected[app] = struct{}{}
		}
	}
	// The subset clusters first, so that a route never names a cluster a
	// client cannot find; the stale ones go once no route names them.
	s.build(affected)
	s.lds.remake(affected)
	s.rulesToGateway()
	s.prune(affected)
}

// RulesRefused returns the apps whose traffic rules are not served over
// xDS, with the reason: "rule 2: cookie session: gRPC calls carry no
// cookies".
func (s *Server) RulesRefused() map[string]string {
	s.rulesMu.Lock()
	defer s.rulesMu.Unlock()
	return maps.Clone(s.refused)
}

// routesOf returns app's routes in force: its rules', else one route to
// its whole cluster.
func (s *Server) routesOf(app string) []*routev3.Route {
	s.rulesMu.Lock()
	t := s.rules[app]
	s.rulesMu.Unlock()
	if t != nil {
		return t.routes
	}
	return []*routev3.Route{{
		Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: ""}},
		Action: toCluster(app),
	}}
}

// rulesFor returns app's translated rules, nil when it has none in force.
func (s *Server) rulesFor(app string) *appRoutes {
	s.rulesMu.Lock()
	defer s.rulesMu.Unlock()
	return s.rules[app]
}

// subsetCluster names the cluster of app's subset: app names cannot hold
// a slash (they are a path segment of Eureka's REST API).
func subsetCluster(app string, sub *routing.Subset) string {
	return app + "/" + sub.Label()
}

func toCluster(name string) *routev3.Route_Route {
	return &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: name}}}
}

// translate returns app's rules as routes and subset clusters, or why
// xDS cannot serve them as the gateways apply them.
func (s *Server) translate(app string, v routing.AppView) (*appRoutes, error) {
	t := &appRoutes{subsets: map[string]*routing.Subset{}, def: v.Default, fallback: v.Fallback}
	cluster := func(sub *routing.Subset) (string, error) {
		if r, _, ok := s.subsetRegion(sub); !ok {
			return "", fmt.Errorf("subset %s: %s is neither the local region nor one of FailoverRegions, whose changes the server follows", sub.Label(), r)
		}
		name := subsetCluster(app, sub)
		t.subsets[name] = sub
		return name, nil
	}
	for i, r := range v.Rules {
		route, err := s.route(r, cluster)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i+1, err)
		}
		t.routes = append(t.routes, route)
	}
	last := &routev3.Route{Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: ""}}, Action: toCluster(app)}
	if v.Default != nil {
		name, err := cluster(v.Default)
		if err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
		last.Action = toCluster(name)
	}
	t.routes = append(t.routes, last)
	return t, nil
}

// route translates one rule.
func (s *Server) route(r routing.RuleView, cluster func(*routing.Subset) (string, error)) (*routev3.Route, error) {
	if r.Sticky != "" {
		return nil, fmt.Errorf("sticky %s: a gRPC client picks a weighted cluster per RPC, not by a key", r.Sticky)
	}
	m := &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: ""}}
	for _, c := range r.Match {
		switch c.Where {
		case "path_prefix":
			m.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: c.Values[0]}
		case "header":
			h, err := headerMatcher(c)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c, err)
			}
			m.Headers = append(m.Headers, h)
		case "cookie":
			return nil, fmt.Errorf("%s: gRPC calls carry no cookies", c)
		case "query":
			return nil, fmt.Errorf("%s: gRPC calls carry no query", c)
		case "method":
			return nil, fmt.Errorf("%s: every gRPC call is a POST", c)
		default:
			return nil, fmt.Errorf("%s: grpc-go's routes do not match a client's address", c)
		}
	}
	var weighted []*routev3.WeightedCluster_ClusterWeight
	for _, to := range r.To {
		name, err := cluster(to.Subset)
		if err != nil {
			return nil, err
		}
		if to.Weight > 0 { // a target of weight 0 takes no request
			weighted = append(weighted, &routev3.WeightedCluster_ClusterWeight{Name: name, Weight: wrapperspb.UInt32(uint32(to.Weight))})
		}
	}
	route := &routev3.Route{Match: m}
	if len(weighted) == 1 {
		route.Action = toCluster(weighted[0].Name)
	} else {
		route.Action = &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_WeightedClusters{
			WeightedClusters: &routev3.WeightedCluster{Clusters: weighted},
		}}}
	}
	return route, nil
}

// headerMatcher is a header condition's matcher: gRPC metadata keys are
// lower case, and grpc-go matches none of grpc-* (its own) or *-bin
// (binary values).
func headerMatcher(c routing.CondView) (*routev3.HeaderMatcher, error) {
	name := strings.ToLower(c.Name)
	if strings.HasPrefix(name, "grpc-") || strings.HasSuffix(name, "-bin") {
		return nil, fmt.Errorf("grpc-go matches no header named grpc-* or *-bin")
	}
	h := &routev3.HeaderMatcher{Name: name}
	switch c.Op {
	case "equals":
		h.HeaderMatchSpecifier = &routev3.HeaderMatcher_StringMatch{StringMatch: &matcherv3.StringMatcher{
			MatchPattern: &matcherv3.StringMatcher_Exact{Exact: c.Values[0]},
		}}
	case "in":
		quoted := make([]string, len(c.Values))
		for i, v := range c.Values {
			quoted[i] = regexp.QuoteMeta(v)
		}
		h.HeaderMatchSpecifier = safeRegex(strings.Join(quoted, "|"))
	case "regex":
		// xDS matches a regex against the whole value; the rules, anywhere
		// in it.
		h.HeaderMatchSpecifier = safeRegex(".*(?:" + c.Values[0] + ").*")
	case "present":
		h.HeaderMatchSpecifier = &routev3.HeaderMatcher_PresentMatch{PresentMatch: true}
	case "absent":
		h.HeaderMatchSpecifier = &routev3.HeaderMatcher_PresentMatch{PresentMatch: true}
		h.InvertMatch = true
	default:
		return nil, fmt.Errorf("the test %s has no header matcher", c.Op)
	}
	return h, nil
}

func safeRegex(expr string) *routev3.HeaderMatcher_StringMatch {
	return &routev3.HeaderMatcher_StringMatch{StringMatch: &matcherv3.StringMatcher{
		MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: "(?:" + expr + ")"}},
	}}
}

// subsetNames returns the names of t's subset clusters, sorted.
func (t *appRoutes) subsetNames() []string {
	if t == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(t.subsets))
}
