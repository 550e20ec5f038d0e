package xds

import (
	"crypto/tls"
	"fmt"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/settings"
	"github.com/eurekagate/eurekagate/registry"
)

// Defaults of Config.
const (
	// DefaultGRPCPortKey is GRPCPortKey's default: the metadata key
	// grpc-spring-boot-starter registers the gRPC server's port under.
	DefaultGRPCPortKey = eureka.DefaultGRPCPortKey
	// DefaultPolicy is Policy's default.
	DefaultPolicy = PolicyRoundRobin
	// DefaultInstanceCA is InstanceCA's default.
	DefaultInstanceCA = "eureka_instances"
	// DefaultMaxListenerNames is MaxListenerNames' default.
	DefaultMaxListenerNames = 10_000
)

// Balancer policies a cluster can name; they are the xDS counterparts of
// the balancer package's policies.
const (
	// PolicyRoundRobin is ROUND_ROBIN (balancer.RoundRobin).
	PolicyRoundRobin = "round_robin"
	// PolicyLeastRequest is LEAST_REQUEST (balancer.LeastRequests).
	PolicyLeastRequest = "least_request"
	// PolicyRingHash is RING_HASH, for a sticky key hashed by the client.
	PolicyRingHash = "ring_hash"
)

// Config configures a Server. A zero Config serves plaintext gRPC with the
// defaults below.
type Config struct {
	// GRPCPortKey is the instance metadata key whose value, when it is a
	// port number (1-65535), is the endpoint's port instead of the
	// instance's port. Default "gRPC_port" (DefaultGRPCPortKey).
	GRPCPortKey string
	// Policy is every cluster's load balancing policy: "round_robin",
	// "least_request" or "ring_hash". Default "round_robin".
	Policy string
	// MaxListenerNames bounds the listener names made for clients (one per
	// spelling a client asks for); a name asked for beyond it is answered
	// as absent. Default 10,000.
	MaxListenerNames int
	// Region is the region of the localities when the source has none of
	// its own: a discovery client's (the Store's is the Store's region).
	// Default "us-east-1" (registry.DefaultRegion).
	Region string
	// FailoverRegions are remote regions of the Store (a Store source
	// only) whose instances of an app are sent as localities of lower
	// priority, in this order, after the local region's: a client sends
	// RPCs to the first of them that has instances when the local region
	// has none, as the gateways' -gateway-failover-regions do. Default:
	// none, the local region only.
	FailoverRegions []string
	// TLS, when set, serves xDS over TLS with it (set ClientAuth and
	// ClientCAs for mutual TLS: the stream carries the whole topology).
	// Default: plaintext.
	TLS *tls.Config
	// InstanceCA names the certificate provider instance, in the clients'
	// bootstrap (grpc-go's certificate_providers, Envoy's
	// certificate_provider_instances), whose CA certificates verify the
	// instances reached over TLS: those on their secure port only (no
	// GRPCPortKey, the plain port disabled). Their clusters carry an
	// UpstreamTlsContext whose server name (SNI) is the instance's
	// hostName, which its certificate must be for. Default
	// "eureka_instances".
	InstanceCA string
	// Logger tells of the apps whose traffic rules are refused for xDS
	// (SetRules), once per refusal, and of an app that comes to mix
	// instances on their plain port with instances on their secure port
	// only. Default: none.
	Logger *zap.Logger
}

// Validate returns the error in c's settings, naming the setting.
func (c Config) Validate() error {
	switch c.Policy {
	case "", PolicyRoundRobin, PolicyLeastRequest, PolicyRingHash:
		return nil
	}
	return fmt.Errorf("xds: Policy: %q is none of %q, %q, %q", c.Policy, PolicyRoundRobin, PolicyLeastRequest, PolicyRingHash)
}

func (c *Config) defaults() error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.GRPCPortKey == "" {
		c.GRPCPortKey = DefaultGRPCPortKey
	}
	if c.Policy == "" {
		c.Policy = DefaultPolicy
	}
	if c.Region == "" {
		c.Region = registry.DefaultRegion
	}
	if c.InstanceCA == "" {
		c.InstanceCA = DefaultInstanceCA
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	settings.Default(&c.MaxListenerNames, DefaultMaxListenerNames)
	return nil
}
