package xds

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Outlier detection as the gateways eject (balancer.Config's defaults):
// consecutive failures, and how long an ejected instance is skipped.
const (
	outlierMaxFails = 3
	outlierCooldown = 30 * time.Second
)

var lbPolicies = map[string]clusterv3.Cluster_LbPolicy{
	PolicyRoundRobin:   clusterv3.Cluster_ROUND_ROBIN,
	PolicyLeastRequest: clusterv3.Cluster_LEAST_REQUEST,
	PolicyRingHash:     clusterv3.Cluster_RING_HASH,
}

// adsSource is the config source of every resource a resource names: the
// same ADS stream.
func adsSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ResourceApiVersion:    corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
	}
}

// cluster is the cluster of an app (its name the registry's, upper
// case) or of a subset of one (SetRules): its endpoints come over EDS
// under the same name.
func (s *Server) cluster(name string) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsSource(), ServiceName: name},
		LbPolicy:             lbPolicies[s.cfg.Policy],
		ConnectTimeout:       durationpb.New(5 * time.Second),
		TransportSocket:      s.transportSocket(name),
		OutlierDetection: &clusterv3.OutlierDetection{
			Consecutive_5Xx:           wrapperspb.UInt32(outlierMaxFails),
			ConsecutiveGatewayFailure: wrapperspb.UInt32(outlierMaxFails),
			BaseEjectionTime:          durationpb.New(outlierCooldown),
		},
	}
}
