package xds

import (
	"cmp"
	"slices"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/eurekagate/eurekagate/eureka"
)

// metadataFilter is the filter metadata key an endpoint's Eureka metadata
// is sent under: the one Envoy's subset load balancer reads, so that its
// subset selectors and our traffic rules' selectors see the same keys.
const metadataFilter = "envoy.lb"

// endpoints is app's load assignment from its instances.
//
// Status: only UP instances are sent, HEALTHY; STARTING, OUT_OF_SERVICE,
// DOWN and UNKNOWN instances are absent, not UNHEALTHY or DRAINING: Envoy
// routes to unhealthy hosts when fewer than its panic threshold (50%) are
// healthy, and grpc-go skips both, so absent is the one mapping under which
// no client of either kind sends an RPC to an instance Eureka says not to.
//
// Port: the instance metadata's GRPCPortKey when it holds a port number,
// else the plain port when enabled, else the secure port when enabled; an
// instance with none of them (or a GRPCPortKey value that is not a port)
// gets no endpoint, since an RPC there could only fail. Instances on their
// secure port are reached over TLS (see decideTLS).
//
// Locality: the Store's region and the instance's zone (Amazon's
// availability zone, else the "zone" metadata), one locality per zone,
// weighted by its endpoint count (a locality without a weight is dropped
// by grpc-go).
//
// Remote regions: with Config.FailoverRegions, each region's UP instances
// follow as localities of that region, one priority lower per region that
// has any (priorities stay contiguous, as clients require): a client
// sends its RPCs to the first priority with instances.
func (s *Server) endpoints(app string) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: app}
	var priority uint32
	add := func(region string, up []*eureka.InstanceInfo) {
		if s.localities(cla, region, priority, up) {
			priority++
		}
	}
	add(s.region, s.src.Instances(app))
	for _, region := range s.failover {
		add(region, s.mirror.InstancesIn(app, region))
	}
	return cla
}

// inFailover reports whether a fail-over region has instances of app.
func (s *Server) inFailover(app string) bool {
	for _, region := range s.failover {
		if len(s.mirror.InstancesIn(app, region)) > 0 {
			return true
		}
	}
	return false
}

// localities adds up's endpoints to cla as region's localities, one per
// zone, at priority, and reports whether it added any.
func (s *Server) localities(cla *endpointv3.ClusterLoadAssignment, region string, priority uint32, up []*eureka.InstanceInfo) bool {
	byZone := map[string][]*endpointv3.LbEndpoint{}
	for _, i := range up {
		if e := s.endpoint(i); e != nil {
			z := i.Zone()
			byZone[z] = append(byZone[z], e)
		}
	}
	var added []*endpointv3.LocalityLbEndpoints
	for z, eps := range byZone {
		added = append(added, &endpointv3.LocalityLbEndpoints{
			Locality:            &corev3.Locality{Region: region, Zone: z},
			LbEndpoints:         eps,
			LoadBalancingWeight: wrapperspb.UInt32(uint32(len(eps))),
			Priority:            priority,
		})
	}
	// A stable order, so that the same instances make the same resource.
	slices.SortFunc(added, func(a, b *endpointv3.LocalityLbEndpoints) int {
		return cmp.Compare(a.Locality.Zone, b.Locality.Zone)
	})
	cla.Endpoints = append(cla.Endpoints, added...)
	return len(added) > 0
}

func (s *Server) endpoint(i *eureka.InstanceInfo) *endpointv3.LbEndpoint {
	addr, port, ok := i.GRPCAddress(s.cfg.GRPCPortKey)
	if !ok || !s.usable(i) {
		return nil
	}
	e := &endpointv3.LbEndpoint{
		HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
			Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
				Address:       addr,
				PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(port)},
			}}},
			Hostname: i.HostName,
		}},
		HealthStatus: corev3.HealthStatus_HEALTHY,
	}
	if len(i.Metadata) > 0 {
		fields := make(map[string]*structpb.Value, len(i.Metadata))
		for k, v := range i.Metadata {
			fields[k] = structpb.NewStringValue(v)
		}
		e.Metadata = &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{metadataFilter: {Fields: fields}}}
	}
	return e
}
