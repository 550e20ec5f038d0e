package xds

import (
	"strings"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"

	"github.com/eurekagate/eurekagate/routing"
)

// buildSubsets adds to clusters and endpoints the subset clusters of
// app's rules (SetRules): a new one's cluster (every one's when their
// TLS changed), every one's endpoints. Its caller holds buildMu.
func (s *Server) buildSubsets(app string, tlsChanged bool, clusters, endpoints map[string]types.Resource) {
	t := s.rulesFor(app)
	for _, name := range t.subsetNames() {
		if !s.subsets[name] || tlsChanged {
			s.subsets[name] = true
			clusters[name] = s.cluster(name)
		}
		endpoints[name] = s.subsetEndpoints(app, name, t, t.subsets[name])
	}
}

// subsetEndpoints is the load assignment of sub's cluster: its UP
// instances, or, when it has none, its fallback's (Router.Select's):
// the default subset's when it is another, any instance's when there is
// no default or the fallback is any, none otherwise.
func (s *Server) subsetEndpoints(app, name string, t *appRoutes, sub *routing.Subset) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: name}
	if s.subsetLocalities(cla, app, sub) {
		return cla
	}
	switch {
	case t.fallback == routing.FallbackNone:
	case t.fallback == routing.FallbackAny, t.def == nil:
		cla.Endpoints = s.endpoints(app).Endpoints
	case t.def != sub:
		s.subsetLocalities(cla, app, t.def)
	}
	return cla
}

// subsetLocalities adds sub's UP instances to cla, those of its region
// when it names one, and reports whether there were any.
func (s *Server) subsetLocalities(cla *endpointv3.ClusterLoadAssignment, app string, sub *routing.Subset) bool {
	up := s.src.Instances(app)
	region, local, _ := s.subsetRegion(sub)
	if !local {
		up = s.mirror.InstancesIn(app, region)
	}
	sel, _ := sub.Selector.Without(routing.RegionKey)
	return s.localities(cla, region, 0, sel.Filter(up))
}

// subsetRegion returns the region of sub's instances as the Store names
// it, whether it is the local one, and whether the server follows it:
// the local region's (a subset that names none, or names it in any
// case), or a fail-over region's.
func (s *Server) subsetRegion(sub *routing.Subset) (region string, local, ok bool) {
	r := sub.Region()
	if r == "" || strings.EqualFold(r, s.region) {
		return s.region, true, true
	}
	for _, f := range s.failover {
		if strings.EqualFold(r, f) {
			return f, false, true
		}
	}
	return r, false, false
}

// dropSubsets adds to gone the subset clusters of app that are not those
// of keep (nil: all of them). Its caller holds buildMu.
func (s *Server) dropSubsets(app string, keep *appRoutes, gone []string) []string {
	prefix := app + "/"
	for name := range s.subsets {
		if strings.HasPrefix(name, prefix) && (keep == nil || keep.subsets[name] == nil) {
			delete(s.subsets, name)
			gone = append(gone, name)
		}
	}
	return gone
}

// prune removes the subset clusters of apps that their rules no longer
// name, once their listeners no longer route to them.
func (s *Server) prune(apps map[string]struct{}) {
	s.buildMu.Lock()
	defer s.buildMu.Unlock()
	var gone []string
	for app := range apps {
		gone = s.dropSubsets(app, s.rulesFor(app), gone)
	}
	_ = s.cds.UpdateResources(nil, gone)
	_ = s.eds.UpdateResources(nil, gone)
}
