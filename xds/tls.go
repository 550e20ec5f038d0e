package xds

import (
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
)

// onSecurePort reports whether i's endpoint is its secure port: it has no
// gRPC port in its metadata and enables only its secure port.
func onSecurePort(i *eureka.InstanceInfo, key string) bool {
	_, md := i.Metadata[key]
	return !md && !(i.Port.Enabled && i.Port.Number > 0) && i.SecurePort.Enabled && i.SecurePort.Number > 0
}

// decideTLS decides whether app's clusters (its own and its subsets')
// reach its instances over TLS: when all the UP instances that have an
// endpoint, in the local region and the fail-over ones, are on their
// secure port. An app that mixes both is plaintext and its secure-only
// instances get no endpoint (a cluster has one transport for all its
// endpoints in grpc-go, which refuses transport_socket_matches); this is
// logged at Warn each time the app becomes mixed. It reports whether the
// decision changed. Its caller holds buildMu.
func (s *Server) decideTLS(app string) bool {
	var plain, secure bool
	check := func(list []*eureka.InstanceInfo) {
		for _, i := range list {
			if _, _, ok := i.GRPCAddress(s.cfg.GRPCPortKey); ok {
				sec := onSecurePort(i, s.cfg.GRPCPortKey)
				secure = secure || sec
				plain = plain || !sec
			}
		}
	}
	check(s.src.Instances(app))
	for _, region := range s.failover {
		check(s.mirror.InstancesIn(app, region))
	}
	tls := secure && !plain
	if mixed := secure && plain; mixed != s.mixed[app] {
		s.mixed[app] = mixed
		if mixed {
			s.log.Warn("xds: an app has instances on their plain port and instances on their secure port only: the latter get no endpoint",
				zap.String("app", app))
		}
	}
	changed := s.tls[app] != tls
	s.tls[app] = tls
	return changed
}

// usable reports whether i gets an endpoint in its app's clusters: a
// secure-only instance only when they are TLS.
func (s *Server) usable(i *eureka.InstanceInfo) bool {
	return !onSecurePort(i, s.cfg.GRPCPortKey) || s.tls[eureka.AppName(i.App)]
}

// transportSocket is the TLS to instances of the clusters of apps whose
// instances are on their secure port: the server name (SNI) is the
// endpoint's host name, the instance's hostName, and its certificate
// must be for that name; the CA certificates are those of the client's
// certificate provider instance Config.InstanceCA.
func (s *Server) transportSocket(cluster string) *corev3.TransportSocket {
	app, _, _ := strings.Cut(cluster, "/")
	if !s.tls[app] {
		return nil
	}
	return &corev3.TransportSocket{
		Name: "envoy.transport_sockets.tls",
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(&tlsv3.UpstreamTlsContext{
			CommonTlsContext: &tlsv3.CommonTlsContext{
				ValidationContextType: &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
					CaCertificateProviderInstance: &tlsv3.CertificateProviderPluginInstance{InstanceName: s.cfg.InstanceCA},
				}},
			},
			AutoHostSni:          true,
			AutoSniSanValidation: true,
		})},
	}
}
