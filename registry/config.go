package registry

import (
	"math/rand/v2"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/internal/settings"
)

// Config holds the Store's settings. The zero value is Eureka's defaults
// (Spring Cloud's where they differ); each field names the Eureka server
// property it mirrors.
type Config struct {
	// DisableSelfPreservation turns self-preservation off, so expired leases
	// are always evicted (eureka.server.enableSelfPreservation=false).
	DisableSelfPreservation bool
	// RenewalPercentThreshold is the share of expected renews below which
	// self-preservation stops evictions, and the share of the registry one
	// eviction run may remove at most is 1 minus it. Default 0.85
	// (DefaultRenewalPercentThreshold, as the others' defaults are in
	// defaults.go).
	RenewalPercentThreshold float64
	// ExpectedClientRenewalInterval is the heartbeat interval the threshold
	// assumes clients use. Default 30s.
	ExpectedClientRenewalInterval time.Duration
	// RenewalThresholdUpdateInterval is how often the expected number of
	// renewing clients is recounted from the registry. Default 15m.
	RenewalThresholdUpdateInterval time.Duration
	// ExpectedRenewsStart is the expected number of renewing clients at
	// start-up. Default 1, as Spring Cloud's server, so a fresh registry
	// evicts.
	ExpectedRenewsStart int
	// EvictionInterval is how often expired leases are evicted. Default 60s.
	EvictionInterval time.Duration
	// DeltaRetention is how long a change stays in the delta. Default 3m.
	DeltaRetention time.Duration
	// DeltaRetentionCleanupInterval is how often old changes are dropped
	// from the delta. Default 30s.
	DeltaRetentionCleanupInterval time.Duration
	// OverrideIdleExpiry is how long an unused status override is kept.
	// Default 1h.
	OverrideIdleExpiry time.Duration
	// PayloadMaxAge is how long a serialized document (the full registry,
	// one app, a VIP query, the delta) is served while only heartbeats
	// happen. Every other change rebuilds what it touched at once; this
	// bounds how stale leaseInfo.lastRenewalTimestamp reads, which
	// heartbeats move without being changes. Default 60s (Eureka's
	// response cache: up to 180s).
	PayloadMaxAge time.Duration
	// MaxPlainPayload is the largest full registry or delta document kept
	// serialized as it is read plain; a larger one is kept compressed only
	// (its gzip form is what most clients read), and a plain read inflates
	// it as it writes it: at a million instances that keeps gigabytes of
	// JSON and XML out of memory, for a plain reader's CPU. Even a smaller
	// one is kept compressed only until a client reads either document
	// plain in its format (JSON or XML): a fleet that asks for gzip, as
	// Spring's client does, never has the plain form in memory. Default
	// DefaultMaxPlainPayload, 256 MiB (about 200,000 Spring-shaped
	// instances in JSON); negative: always keep the plain form.
	MaxPlainPayload int64
	// PrebuildDelay is how long the registry must go without a change
	// before the full registry and the delta are built, gzip forms
	// included, ahead of their next reader (prebuild; JSON always, XML
	// while read in the last 5 minutes): after a mass registration a
	// fleet's reads then find them built, instead of waiting for the
	// first reader's build (seconds at a million instances). Default
	// DefaultPrebuildDelay, 1s; negative: never, each document is built
	// by its first reader after a change.
	PrebuildDelay time.Duration
	// DisableDelta makes the delta endpoint answer 403, so clients fall
	// back to full fetches (eureka.server.disableDelta).
	DisableDelta bool
	// LegacyLeaseExpiry reproduces Eureka's doubled lease timeout: a lease
	// that has been renewed expires 2 x durationInSecs after its last renew,
	// and leaseInfo.lastRenewalTimestamp is reported one duration in the
	// future. Use it in clusters mixed with Java Eureka servers. By default a
	// lease expires exactly durationInSecs after its last renew.
	LegacyLeaseExpiry bool
	// InstanceID is this server's own instance id; the instance with this id
	// is reported with isCoordinatingDiscoveryServer "true". Optional.
	InstanceID string

	// Region is this registry's region (eureka.region). Default
	// DefaultRegion, "us-east-1", as Eureka's.
	Region string
	// RemoteRegions are the other regions this registry serves on request
	// (the names of eureka.server.remoteRegionUrlsWithName; their copies
	// are package registry/regions's Mirror, whoever feeds them, such as
	// registry/regions/feeds, holds their URLs): a read with regions=a,b
	// merges their instances in. Default: none.
	RemoteRegions []RemoteRegion
	// RemoteRegionAppWhitelist is the global app whitelist
	// (eureka.server.remoteRegion.global.appWhiteList): the apps of a
	// remote region without a whitelist of its own that reads merge in.
	// Default: every app.
	RemoteRegionAppWhitelist []string
	// DisableTransparentFallback stops GET /apps/{app} from answering a
	// remote region's copy of an app the local region has no instance of
	// (eureka.server.disableTransparentFallbackToOtherRegion).
	DisableTransparentFallback bool
	// RemoteRegionRetention is how long a remote region that stopped
	// answering keeps serving its last registry; then its instances are
	// dropped (reads answer without them) until it answers again. Eureka
	// keeps them for ever. Default DefaultRemoteRegionRetention, 5m.
	RemoteRegionRetention time.Duration

	// Logger receives one info line per state change an operator cares
	// about: registrations of new instances, cancels, evictions, status
	// overrides, and self-preservation starting and ending. Never
	// heartbeats. Default: no logging.
	Logger *zap.Logger

	// Clock is the time source. Default: the system clock.
	Clock Clock
	// Rand chooses which expired leases an eviction run removes when it may
	// not remove them all. Default: a generator seeded from the clock.
	Rand *rand.Rand
}

// Clock tells the time. Tests use a fake one so that leases expire without
// waiting.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// withDefaults returns c with every unset field at its default.
func (c Config) withDefaults() Config {
	if c.RenewalPercentThreshold <= 0 || c.RenewalPercentThreshold > 1 {
		c.RenewalPercentThreshold = DefaultRenewalPercentThreshold
	}
	settings.Default(&c.ExpectedClientRenewalInterval, DefaultExpectedClientRenewalInterval)
	settings.Default(&c.RenewalThresholdUpdateInterval, DefaultRenewalThresholdUpdateInterval)
	settings.Default(&c.EvictionInterval, DefaultEvictionInterval)
	settings.Default(&c.DeltaRetention, DefaultDeltaRetention)
	settings.Default(&c.DeltaRetentionCleanupInterval, DefaultDeltaRetentionCleanupInterval)
	settings.Default(&c.OverrideIdleExpiry, DefaultOverrideIdleExpiry)
	settings.Default(&c.PayloadMaxAge, DefaultPayloadMaxAge)
	settings.Default(&c.RemoteRegionRetention, DefaultRemoteRegionRetention)
	if c.PrebuildDelay == 0 {
		c.PrebuildDelay = DefaultPrebuildDelay // negative stays: never
	}
	if c.MaxPlainPayload == 0 {
		c.MaxPlainPayload = DefaultMaxPlainPayload // negative stays: never
	}
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	if c.ExpectedRenewsStart <= 0 {
		c.ExpectedRenewsStart = DefaultExpectedRenewsStart
	}
	if c.Clock == nil {
		c.Clock = systemClock{}
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Rand == nil {
		seed := uint64(c.Clock.Now().UnixNano())
		c.Rand = rand.New(rand.NewPCG(seed, seed>>1|1))
	}
	return c
}
