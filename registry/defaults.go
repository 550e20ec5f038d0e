package registry

import "time"

// The defaults of Config, Eureka's (Spring Cloud's where they differ):
// one per setting, which the Store, cmd/eureka's flags, the Caddy eureka
// app and the documentation all take from here.
const (
	// DefaultRenewalPercentThreshold is RenewalPercentThreshold's default
	// (eureka.server.renewalPercentThreshold).
	DefaultRenewalPercentThreshold = 0.85
	// DefaultExpectedClientRenewalInterval is
	// ExpectedClientRenewalInterval's default.
	DefaultExpectedClientRenewalInterval = 30 * time.Second
	// DefaultRenewalThresholdUpdateInterval is
	// RenewalThresholdUpdateInterval's default.
	DefaultRenewalThresholdUpdateInterval = 15 * time.Minute
	// DefaultExpectedRenewsStart is ExpectedRenewsStart's default.
	DefaultExpectedRenewsStart = 1
	// DefaultEvictionInterval is EvictionInterval's default.
	DefaultEvictionInterval = 60 * time.Second
	// DefaultDeltaRetention is DeltaRetention's default.
	DefaultDeltaRetention = 3 * time.Minute
	// DefaultDeltaRetentionCleanupInterval is
	// DeltaRetentionCleanupInterval's default.
	DefaultDeltaRetentionCleanupInterval = 30 * time.Second
	// DefaultOverrideIdleExpiry is OverrideIdleExpiry's default.
	DefaultOverrideIdleExpiry = time.Hour
	// DefaultPayloadMaxAge is PayloadMaxAge's default.
	DefaultPayloadMaxAge = 60 * time.Second
	// DefaultPrebuildDelay is PrebuildDelay's default.
	DefaultPrebuildDelay = time.Second
	// DefaultMaxPlainPayload is MaxPlainPayload's default.
	DefaultMaxPlainPayload = 256 << 20
	// DefaultRemoteRegionRetention is RemoteRegionRetention's default.
	DefaultRemoteRegionRetention = 5 * time.Minute
	// DefaultRemoteRegionFetchInterval is how often a remote region's
	// registry is read when it offers no watch
	// (eureka.server.remoteRegionRegistryFetchInterval).
	DefaultRemoteRegionFetchInterval = 30 * time.Second
	// DefaultMaxRegionBytes bounds a remote region's answer, in bytes
	// after gzip decoding (registry/regions/feeds.Config.MaxRegionBytes): 1
	// GiB, as every reader of ours (eurekahttp.DefaultMaxBodySize), the
	// registry of a region at the scale one node holds.
	DefaultMaxRegionBytes = 1 << 30
	// DefaultMaxRegionInstances bounds the instances a remote region's
	// registry may hold (registry/regions/feeds.Config.MaxRegionInstances): a
	// million, the scale one node holds. A region known to be smaller is
	// better held to its size.
	DefaultMaxRegionInstances = 1_000_000
)

// DefaultRegion is Config.Region's default (eureka.region).
const DefaultRegion = "us-east-1"
