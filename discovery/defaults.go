package discovery

import (
	"time"

	"github.com/eurekagate/eurekagate/internal/eurekahttp"
)

// The defaults of Config, the Java client's: one per setting, which the
// client, the Caddy eureka app's remote mode and the documentation take
// from here.
const (
	// DefaultRegistryFetchInterval is RegistryFetchInterval's default
	// (registryFetchIntervalSeconds).
	DefaultRegistryFetchInterval = 30 * time.Second
	// DefaultWatchWait is WatchWait's default.
	DefaultWatchWait = 30 * time.Second
	// DefaultExpBackOffBound is ExpBackOffBound's default.
	DefaultExpBackOffBound = 10
	// DefaultQuarantineDuration is QuarantineDuration's default.
	DefaultQuarantineDuration = eurekahttp.DefaultQuarantineDuration
	// DefaultServerReshuffleInterval is ServerReshuffleInterval's default.
	DefaultServerReshuffleInterval = eurekahttp.DefaultReshuffleInterval
	// DefaultConnectTimeout and DefaultReadTimeout are ConnectTimeout's and
	// ReadTimeout's defaults.
	DefaultConnectTimeout = eurekahttp.DefaultConnectTimeout
	DefaultReadTimeout    = eurekahttp.DefaultReadTimeout
	// DefaultPort is InstanceConfig.Port's default.
	DefaultPort = 8080
	// DefaultRegion is Region's default (eureka.client.region), as Java's.
	DefaultRegion = "us-east-1"
)
