package xds_test

import (
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/xds"
)

// secureOnly is an instance of app that enables only its secure port.
func secureOnly(app, id string) *eureka.InstanceInfo {
	i := testkit.Inst(app, id)
	i.Port.Enabled = false
	i.SecurePort = eureka.Port{Number: 8443, Enabled: true}
	return i
}

// An app whose instances enable only their secure port has a cluster
// with TLS to them: the server name is the instance's host name, its
// certificate checked for it against the CA of the certificate provider
// InstanceCA names; the resources pass ValidateAll (recv). When an
// instance on its plain port joins, the cluster is plaintext again and
// the secure-only instance has no endpoint.
func TestClusterOfSecureOnlyInstancesCarriesTLS(t *testing.T) {
	e := newEnv(t, xds.Config{InstanceCA: "orders_ca"})
	testkit.MustRegister(t, e.store, secureOnly("ORDERS", "s1"), false)

	d := openDelta(t, e)
	d.subscribe(resourcev3.ClusterType, "ORDERS")
	c := cluster(t, d.recv())
	ts := c.GetTransportSocket()
	if ts.GetName() != "envoy.transport_sockets.tls" {
		t.Fatalf("cluster of secure-only instances: transport socket %v", ts)
	}
	var up tlsv3.UpstreamTlsContext
	if err := ts.GetTypedConfig().UnmarshalTo(&up); err != nil {
		t.Fatal(err)
	}
	ca := up.GetCommonTlsContext().GetValidationContext().GetCaCertificateProviderInstance().GetInstanceName()
	if !up.AutoHostSni || !up.AutoSniSanValidation || ca != "orders_ca" {
		t.Fatalf("UpstreamTlsContext %v", &up)
	}
	d.subscribe(resourcev3.EndpointType, "ORDERS")
	eps := endpointsOf(t, d.recv())
	if len(eps) != 1 || eps[0].GetEndpoint().GetHostname() != "s1.local" || eps[0].GetEndpoint().GetAddress().GetSocketAddress().GetPortValue() != 8443 {
		t.Fatalf("endpoints %v, want s1.local's secure port, its host name the SNI", eps)
	}

	testkit.MustRegister(t, e.store, testkit.Inst("ORDERS", "p1"), false)
	for c.GetTransportSocket() != nil || len(eps) != 1 || eps[0].GetEndpoint().GetHostname() != "p1.local" {
		switch r := d.recv(); r.TypeUrl {
		case resourcev3.ClusterType:
			c = cluster(t, r)
		case resourcev3.EndpointType:
			eps = endpointsOf(t, r)
		}
	}
}

func cluster(t *testing.T, r *discoverygrpc.DeltaDiscoveryResponse) *clusterv3.Cluster {
	t.Helper()
	var c clusterv3.Cluster
	if len(r.Resources) != 1 || r.Resources[0].Resource.UnmarshalTo(&c) != nil {
		t.Fatalf("want one cluster, got %v", r)
	}
	return &c
}

func endpointsOf(t *testing.T, r *discoverygrpc.DeltaDiscoveryResponse) []*endpointv3.LbEndpoint {
	t.Helper()
	var cla endpointv3.ClusterLoadAssignment
	if len(r.Resources) != 1 || r.Resources[0].Resource.UnmarshalTo(&cla) != nil {
		t.Fatalf("want one load assignment, got %v", r)
	}
	var out []*endpointv3.LbEndpoint
	for _, l := range cla.Endpoints {
		out = append(out, l.LbEndpoints...)
	}
	return out
}
