package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/heapfloor"
	"github.com/eurekagate/eurekagate/internal/tlsfiles"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/regions/feeds"
	"github.com/eurekagate/eurekagate/registry/replication"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/xds"
)

func init() {
	caddy.RegisterModule(new(App))
}

// App is the eureka app: a Eureka-compatible service registry hosted in
// the Caddy process, or, with Remote set, a client of remote Eureka servers.
// Either way it is where the eureka upstream source, the
// eureka_round_robin and eureka_least_requests policies and the
// eureka_gateway handler find an application's instances.
//
// With HealthInterval set, the app also runs active health checks of the
// instances requests are routed to (by eureka_gateway or the eureka
// upstream source): an instance whose health URL fails is not routed to
// until it passes again. Caddy's own active health checks do not apply to
// dynamic upstreams; these do.
//
// The registry's registrations survive config reloads: registries are kept
// by name, and a reload that names the same registry keeps using it. Its
// background work (eviction, delta retention, the renewal threshold
// recount, or the remote client's fetches) runs while a config that uses it
// is running.
type App struct {
	// Registry names the registry, so that configs naming the same registry
	// share it across reloads. Default: "default".
	Registry string `json:"registry,omitempty"`

	// SpringConfig names a Spring Cloud Eureka Server's configuration
	// (application.yml, .yaml or .properties; the profile files beside it
	// by spring.profiles.active), read as cmd/eureka reads it, with
	// Spring's environment variables (docs/spring.md): each property that
	// is an option here sets it unless the option is set too, which wins
	// (logged); each property that has no effect in Caddy, or is unknown,
	// is logged, and a value of the wrong type fails the start with
	// file:line: property: reason. Default: none.
	SpringConfig string `json:"spring_config,omitempty"`

	// Remote lists Eureka service URLs (such as
	// http://eureka-1:8761/eureka/). When set, the app hosts no registry: it
	// fetches the registry from these servers with the discovery client,
	// and eureka_server cannot be used. The hosted registry's settings
	// (EvictionInterval through MaxBatchDelay) are refused with it, and
	// FetchInterval, Zone and DisableWatch without it. Default: none, a
	// hosted registry.
	Remote []string `json:"remote,omitempty"`
	// FetchInterval is how often the remote registry is refreshed from a
	// server that does not offer the watch (Java Eureka); our servers are
	// watched, and their changes arrive within a round trip. Default: 30s.
	FetchInterval caddy.Duration `json:"fetch_interval,omitempty"`
	// Zone is this gateway's zone; remote servers of that zone are tried
	// first.
	Zone string `json:"zone,omitempty"`

	// EvictionInterval is how often expired leases are evicted.
	// Default: 60s.
	EvictionInterval caddy.Duration `json:"eviction_interval,omitempty"`
	// SelfPreservation suspends evictions while renews fall below the
	// threshold. Default: on.
	SelfPreservation *bool `json:"self_preservation,omitempty"`
	// RenewalPercentThreshold is the share of expected renews below which
	// self-preservation starts. Default: 0.85.
	RenewalPercentThreshold float64 `json:"renewal_percent_threshold,omitempty"`
	// ExpectedClientRenewalInterval is the heartbeat interval clients are
	// assumed to use. Default: 30s.
	ExpectedClientRenewalInterval caddy.Duration `json:"expected_client_renewal_interval,omitempty"`
	// RenewalThresholdUpdateInterval is how often the expected number of
	// renewing clients is recounted. Default: 15m.
	RenewalThresholdUpdateInterval caddy.Duration `json:"renewal_threshold_update_interval,omitempty"`
	// DeltaRetention is how long a change stays in the delta. Default: 3m.
	DeltaRetention caddy.Duration `json:"delta_retention,omitempty"`
	// OverrideIdleExpiry is how long an unused status override is kept.
	// Default: 1h.
	OverrideIdleExpiry caddy.Duration `json:"override_idle_expiry,omitempty"`
	// DisableDelta answers delta fetches with 403.
	DisableDelta bool `json:"disable_delta,omitempty"`
	// LegacyLeaseExpiry reproduces Eureka's doubled lease timeout, for
	// clusters mixed with Java Eureka servers. By default a lease expires
	// durationInSecs after its last renew.
	LegacyLeaseExpiry bool `json:"legacy_lease_expiry,omitempty"`
	// MaxBodySize limits request bodies of the REST API, in bytes; larger
	// ones get 413. Default: 1 MiB.
	MaxBodySize int64 `json:"max_body_size,omitempty"`
	// AllowedHosts are the Host headers (HOST[:PORT]; a host without a
	// port matches any port) that eureka_server and eureka_dashboard
	// answer, besides loopback names and addresses and the server's own
	// listen hosts, in an HTTP server that listens on loopback only and
	// authenticates nothing (no basic_auth, forward_auth or client
	// certificates): other hosts get 403, so that a page whose name is
	// rebound to 127.0.0.1 does not reach the registry. A site address
	// with a host already matches only that host; this covers sites that
	// match any (:8761, bind 127.0.0.1). Servers that listen beyond
	// loopback or authenticate are not affected. Default: none.
	AllowedHosts []string `json:"allowed_hosts,omitempty"`
	// Authz binds users and client certificates to the apps they may
	// write, names the operators and the audit log (see Authz).
	Authz
	// MaxResponseSize bounds what the app reads from other registry
	// servers, in bytes as received and gzip-decoded: the peers' registry
	// at the start-up sync and their batch answers, or in remote mode the
	// registry it fetches. A larger answer is an error naming this
	// option. Default: 1 GiB, a million instances, so that the app reads
	// what one of our nodes serves; it stays a guard against a gzip bomb.
	MaxResponseSize int64 `json:"max_response_size,omitempty"`

	// Peers are the service URLs of the other nodes of a registry cluster
	// (Eurekagate or Java Eureka servers). Client writes are replicated to
	// them with Eureka's peer protocol, and the registry syncs from them
	// when it starts. User info in a URL is sent as basic auth. A reload
	// that changes peers (or peers_dns) applies the new list to the
	// running registry, which keeps its registrations: a peer that joins
	// gets every change from then on, one that leaves gets nothing more
	// and its queue is dropped.
	Peers []string `json:"peers,omitempty"`
	// PeersDNS are DNS names whose records are peers:
	// http://NAME:PORT/eureka/ makes each A and AAAA record of NAME (a
	// Kubernetes headless Service) a peer at that port, scheme and path;
	// srv://NAME/eureka/ (srv+https:// for https) each SRV record's
	// target and port. They are looked up at start, every
	// peers_resolve_interval and when a connection to a peer fails; this
	// node recognises itself among the records. Default: none.
	PeersDNS []string `json:"peers_dns,omitempty"`
	// DNSResolver is the DNS server (host:port) peers_dns are looked up
	// at. Default: the system's resolver.
	DNSResolver string `json:"dns_resolver,omitempty"`
	// PeersResolveInterval is how often peers_dns are looked up again.
	// Default: 30s.
	PeersResolveInterval caddy.Duration `json:"peers_resolve_interval,omitempty"`
	// SelfURL is this node's own service URL, so that it is skipped when
	// it appears in Peers (all nodes can then share one peer list).
	SelfURL string `json:"self_url,omitempty"`
	// MaxBatchDelay is how long a replication task waits for others to
	// join its batch. Default 0: sent at once, batched only while a batch
	// is in flight.
	MaxBatchDelay caddy.Duration `json:"max_batch_delay,omitempty"`
	// Region is the hosted registry's region (eureka.region): its own
	// instances' region, as reads with regions= and eureka_gateway's
	// failover_regions tell them from the remote regions'. Default:
	// us-east-1, as Eureka's.
	Region string `json:"region,omitempty"`
	// RemoteRegions are the other regions the hosted registry serves on
	// request (eureka.server.remoteRegionUrlsWithName), in order, each
	// with the service URLs of its Eureka servers. Each region's registry
	// is read whole, with no registration and no regions parameter (so
	// regions never chain), watched on our servers and read every
	// RemoteRegionFetchInterval on others, over tls_ca and tls_cert for
	// https:// URLs. A read with regions=<name> merges in the region's
	// instances, and is answered 403 until the region has been read once.
	// The regions are read while the config runs. Default: none.
	RemoteRegions []RemoteRegion `json:"remote_regions,omitempty"`
	// RemoteRegionApps are the apps of each remote region, by its name,
	// that reads with regions= merge in
	// (eureka.server.remoteRegion.<region>.appWhiteList); under "global",
	// those of every region without a list of its own. Default: every app.
	RemoteRegionApps map[string][]string `json:"remote_region_apps,omitempty"`
	// RemoteRegionFetchInterval is how often a remote region whose servers
	// offer no watch (Java Eureka) is read again. Default: 30s.
	RemoteRegionFetchInterval caddy.Duration `json:"remote_region_fetch_interval,omitempty"`
	// RemoteRegionMaxBytes bounds each answer of a remote region's
	// servers, in bytes after gzip decoding, and RemoteRegionMaxInstances
	// the instances its registry may hold: a region that sends more is
	// refused, its last registry kept, and its state (the dashboard's
	// regions, /eureka/status) says why. Defaults: 64 MiB and 100,000.
	RemoteRegionMaxBytes     int `json:"remote_region_max_bytes,omitempty"`
	RemoteRegionMaxInstances int `json:"remote_region_max_instances,omitempty"`
	// RemoteRegionRetention is how long a remote region that stopped
	// answering keeps serving its last registry; then its instances are
	// dropped until it answers again. Default: 5m.
	RemoteRegionRetention caddy.Duration `json:"remote_region_retention,omitempty"`
	// DisableTransparentFallback answers GET /eureka/apps/{app} 404 for an
	// app the local region has no instance of, instead of a remote
	// region's copy of it
	// (eureka.server.disableTransparentFallbackToOtherRegion).
	DisableTransparentFallback bool `json:"disable_transparent_fallback,omitempty"`

	// DisableWatch makes remote mode poll every fetch_interval instead of
	// watching a server that offers the watch (Caddyfile: watch off).
	// Default: watch, so changes arrive within a round trip.
	DisableWatch bool `json:"disable_watch,omitempty"`

	// TLSCA is a PEM file of the CAs that the certificates of https://
	// remote servers and peers must chain to, for a private CA. Default:
	// the system's roots.
	TLSCA string `json:"tls_ca,omitempty"`
	// TLSCert and TLSKey are PEM files of the client certificate and key
	// presented to remote servers and peers that require one (mutual TLS).
	// They are reloaded when they change on disk. Default: none.
	TLSCert string `json:"tls_cert,omitempty"`
	TLSKey  string `json:"tls_key,omitempty"`

	// HealthInterval turns on active health checks and says how often
	// they run: each instance of the applications requests are routed to
	// gets a GET to the health URL it registered (healthCheckUrl, or
	// secureHealthCheckUrl), at that URL's host and port and nowhere else
	// (redirects are not followed). An instance whose check fails is not
	// routed to until a check passes; one without a health URL is not
	// checked. The checks run while the config runs, and start over, all
	// instances healthy, with each config. Default: off.
	HealthInterval caddy.Duration `json:"health_interval,omitempty"`
	// HealthTimeout bounds a check: one without an answer in time fails.
	// Default: 5s, or HealthInterval if that is shorter.
	HealthTimeout caddy.Duration `json:"health_timeout,omitempty"`
	// HealthStatus is the status of a passing check: a status code, or a
	// class as its first digit (2 for 2xx; the Caddyfile takes 2xx).
	// Default: any 2xx.
	HealthStatus int `json:"health_status,omitempty"`

	// XDS serves the registry over xDS to Envoy and to gRPC clients
	// (see XDS). Default: none.
	XDS *XDS `json:"xds,omitempty"`

	// SpareProcessor raises GOMAXPROCS by one when the app starts, once a
	// process and never lowered again, unless the GOMAXPROCS environment
	// variable is set (spareprocessor.go). Default: off in a Caddy built
	// with xcaddy, on in cmd/caddy (SpareProcessorByDefault).
	SpareProcessor *bool `json:"spare_processor,omitempty"`

	// HeapFloor lets the heap grow by this many bytes past the live heap
	// before Go's garbage collector runs (heapfloor.go): with GOGC's
	// default a gateway beside a small registry collects dozens of times
	// a second under load. The process may hold that much more memory;
	// past the floor GOGC's rule applies, and a memory limit (GOMEMLIMIT;
	// `caddy run` sets one at 90 % of a container's memory limit, or of
	// the machine's memory, when it is not set) still bounds the heap,
	// the floor at most a quarter of it. Not kept when the collector's
	// percentage is the user's (GOGC in the environment). 0: none.
	// Default: none in a Caddy built with xcaddy, 32 MiB in cmd/caddy
	// (HeapFloorByDefault).
	HeapFloor *int64 `json:"heap_floor,omitempty"`

	// Redis is the Redis of the eureka_gateway limits with shared: true
	// (redis.go). Default: none, and shared: true is refused.
	Redis  string                `json:"redis,omitempty"`
	shared *routing.SharedLimits // nil without Redis

	entry   *entry
	floor   *heapfloor.Floor  // startHeapFloor's
	checker *balancer.Checker // nil without active health checks
	feeds   *feeds.Feeds      // this config's; nil without remote regions
	log     *zap.Logger
	xds     *xds.Server // nil without XDS

	servedMu sync.Mutex
	served   map[*caddyhttp.Server][]servedBy // the HTTP servers that serve this registry, and by which handlers
}

// RemoteRegion is one remote region of the hosted registry.
type RemoteRegion struct {
	// Name is the region's name, as reads' regions parameter names it
	// (without regard to case).
	Name string `json:"name"`
	// URLs are its Eureka servers' service URLs, such as
	// http://eureka.eu-west-1:8761/eureka/, tried in turn.
	URLs []string `json:"urls"`
}

// CaddyModule returns the Caddy module information.
func (*App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "eureka", New: func() caddy.Module { return new(App) }}
}

// Provision checks the settings, fills in defaults and takes a reference
// to the named registry, creating it if no running config holds it. It
// starts nothing. A config that names a new registry while another is
// running logs a warning: the other's registrations go with the config
// this one replaces.
func (a *App) Provision(ctx caddy.Context) error {
	a.log = ctx.Logger()
	if err := a.applySpring(); err != nil {
		return err
	}
	if err := a.check(); err != nil {
		return err
	}
	if err := a.provisionAuthz(); err != nil {
		return err
	}
	if a.Registry == "" {
		a.Registry = "default"
	}
	e, loaded, err := acquire(a.Registry, a.settings(), a.registryOptions(), a.log)
	if err != nil {
		return err
	}
	a.entry = e
	if !loaded {
		warnRenamed(a.log, a.Registry)
	}
	if a.HealthInterval > 0 {
		a.checker = balancer.NewChecker(e.instances, balancer.CheckConfig{
			Interval:     time.Duration(a.HealthInterval),
			Timeout:      time.Duration(a.HealthTimeout),
			ExpectStatus: a.HealthStatus,
			Logger:       a.log.Named("health"),
		})
	}
	// Each config has a new metrics registry: register the registry's
	// collector with every one.
	if m := e.metrics(); m != nil {
		if err := ctx.GetMetricsRegistry().Register(m); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return fmt.Errorf("registering metrics: %v", err)
		}
	}
	e.checker.Store(a.checker)
	if err := a.provisionRegions(); err != nil {
		return err
	}
	if err := ctx.GetMetricsRegistry().Register(e.trafficMetrics); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
		return fmt.Errorf("registering metrics: %v", err)
	}
	if err := a.provisionRedis(ctx); err != nil {
		return err
	}
	return a.provisionXDS(ctx)
}

// provisionRegions makes this config's feeds of the remote regions: they
// read the regions into the registry while the config runs, as the
// active health checks run, so that a reload may change the regions'
// service URLs and fetch interval (not their names, which are the
// registry's) while the registry and the regions' last registries stay.
func (a *App) provisionRegions() error {
	if len(a.RemoteRegions) == 0 || a.entry.store == nil {
		return nil
	}
	cfg := feeds.Config{FetchInterval: time.Duration(a.RemoteRegionFetchInterval), Logger: a.log.Named("regions"),
		MaxRegionBytes: a.RemoteRegionMaxBytes, MaxRegionInstances: a.RemoteRegionMaxInstances}
	for _, r := range a.RemoteRegions {
		cfg.Remotes = append(cfg.Remotes, feeds.Remote{Name: r.Name, URLs: r.URLs})
	}
	if files := (tlsfiles.Files{CA: a.TLSCA, Cert: a.TLSCert, Key: a.TLSKey}); files != (tlsfiles.Files{}) {
		tc, err := tlsfiles.Client(files)
		if err != nil {
			return err
		}
		cfg.TLS = tc
	}
	f, err := feeds.New(a.entry.store, cfg)
	if err != nil {
		return fmt.Errorf("remote_regions: %v", err)
	}
	a.feeds = f
	return nil
}

// warnRenamed logs, for a config that creates registry name, each other
// registry in the pool: the running config's, whose registrations are
// dropped when this config replaces it.
func warnRenamed(log *zap.Logger, name string) {
	for old, n := range others(name) {
		log.Warn("registry renamed: the running config's registry is dropped with its registrations when this config replaces it; name the registry "+
			strconv.Quote(old)+" to keep them",
			zap.String("registry", name), zap.String("dropped", old), zap.Int("instances", n))
	}
}

// Validate checks the settings (Provision has already: a JSON config gets
// the same messages as a Caddyfile, without line numbers).
func (a *App) Validate() error { return a.check() }

// check refuses settings that cannot work or would be ignored, with a
// message naming the option, the value and the fix.
func (a *App) check() error {
	if err := a.checkAllowedHosts(); err != nil {
		return err
	}
	if err := a.checkURLs(); err != nil {
		return err
	}
	if err := a.checkMode(); err != nil {
		return err
	}
	if err := a.checkRegions(); err != nil {
		return err
	}
	if err := a.checkXDS(); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		v    caddy.Duration
	}{
		{"fetch_interval", a.FetchInterval}, {"eviction_interval", a.EvictionInterval},
		{"expected_client_renewal_interval", a.ExpectedClientRenewalInterval},
		{"renewal_threshold_update_interval", a.RenewalThresholdUpdateInterval},
		{"delta_retention", a.DeltaRetention}, {"override_idle_expiry", a.OverrideIdleExpiry},
		{"max_batch_delay", a.MaxBatchDelay}, {"health_interval", a.HealthInterval}, {"health_timeout", a.HealthTimeout},
		{"remote_region_fetch_interval", a.RemoteRegionFetchInterval}, {"remote_region_retention", a.RemoteRegionRetention},
		{"peers_resolve_interval", a.PeersResolveInterval},
	} {
		if d.v < 0 { // zero is the default in JSON
			return checkDuration(d.name, time.Duration(d.v), false)
		}
	}
	if t := a.RenewalPercentThreshold; t < 0 || t > 1 {
		return fmt.Errorf("renewal_percent_threshold %v must be a number above 0 and at most 1, such as 0.85 (the default)", t)
	}
	if a.MaxResponseSize < 0 || a.MaxResponseSize > math.MaxInt {
		return fmt.Errorf("max_response_size %d must be a positive number of bytes; leave it out for the default, 1GiB", a.MaxResponseSize)
	}
	if a.HeapFloor != nil && *a.HeapFloor < 0 {
		return fmt.Errorf("heap_floor %d must not be negative; 0 is none, leave it out for the default", *a.HeapFloor)
	}
	if a.MaxBodySize < 0 {
		return fmt.Errorf("max_body_size %d must not be negative; leave it out for the default, 1MiB", a.MaxBodySize)
	}
	if (a.TLSCert == "") != (a.TLSKey == "") {
		return fmt.Errorf("tls_cert %q and tls_key %q go together: give both, or neither", a.TLSCert, a.TLSKey)
	}
	if a.HealthStatus < 0 {
		return fmt.Errorf("health_status %d must be a status code or a class such as 2xx", a.HealthStatus)
	}
	if a.HealthInterval == 0 && (a.HealthTimeout != 0 || a.HealthStatus != 0) {
		return fmt.Errorf("health_timeout and health_status need health_interval, which turns active health checks on; add health_interval 10s")
	}
	return nil
}

// Start runs the registry's background work (or the remote client), and
// the active health checks. It warns, once per HTTP server, when the
// registry's API or dashboard is served beyond loopback with no
// authentication in that server (basic_auth, forward_auth or TLS client
// certificates), since anyone who reaches it could then register and
// cancel instances.
func (a *App) Start() error {
	a.warnExposed()
	spare := SpareProcessorByDefault
	if a.SpareProcessor != nil {
		spare = *a.SpareProcessor
	}
	if spare {
		spareProcessor(a.log)
	}
	if err := a.entry.start(); err != nil {
		return err
	}
	if p := a.entry.peers; p != nil {
		// This config's peers, which a reload may have changed: checked
		// by Validate, so SetPeers takes them.
		if err := p.SetPeers(a.Peers, a.PeersDNS); err != nil {
			return err
		}
	}
	if a.checker != nil {
		a.checker.Start()
	}
	if a.feeds != nil {
		a.feeds.Start()
	}
	if err := a.startXDS(); err != nil {
		return err
	}
	a.startHeapFloor() // last: Caddy stops no app whose Start failed
	return nil
}

// Stop stops the active health checks and the remote regions' feeds, and
// the background work unless another running config uses the same
// registry.
func (a *App) Stop() error {
	a.stopHeapFloor()
	a.stopXDS()
	if a.checker != nil {
		a.checker.Stop()
	}
	var err error
	if a.feeds != nil {
		err = a.stopFeeds()
	}
	return errors.Join(err, a.entry.stop())
}

// stopFeeds stops the remote regions' feeds, waiting for them.
func (a *App) stopFeeds() error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return a.feeds.Stop(ctx)
}

// Cleanup releases the registry; the last config that releases it
// destroys it. The remote regions' feeds of a config that never started
// are let go.
func (a *App) Cleanup() error {
	defer a.cleanupAuthz()
	a.stopXDS()
	a.closeRedis()
	if a.feeds != nil {
		a.stopFeeds()
	}
	if a.entry == nil {
		return nil
	}
	_, err := pool.Delete(a.Registry)
	return err
}

// settings turns the app's fields into the pieces' configs.
func (a *App) settings() settings {
	st := registry.Config{
		DisableSelfPreservation:        a.SelfPreservation != nil && !*a.SelfPreservation,
		RenewalPercentThreshold:        a.RenewalPercentThreshold,
		ExpectedClientRenewalInterval:  time.Duration(a.ExpectedClientRenewalInterval),
		RenewalThresholdUpdateInterval: time.Duration(a.RenewalThresholdUpdateInterval),
		EvictionInterval:               time.Duration(a.EvictionInterval),
		DeltaRetention:                 time.Duration(a.DeltaRetention),
		OverrideIdleExpiry:             time.Duration(a.OverrideIdleExpiry),
		DisableDelta:                   a.DisableDelta,
		LegacyLeaseExpiry:              a.LegacyLeaseExpiry,
		Region:                         a.Region,
		RemoteRegionAppWhitelist:       a.remoteRegionApps("global"),
		DisableTransparentFallback:     a.DisableTransparentFallback,
		RemoteRegionRetention:          time.Duration(a.RemoteRegionRetention),
	}
	for _, r := range a.RemoteRegions {
		st.RemoteRegions = append(st.RemoteRegions, registry.RemoteRegion{Name: r.Name, AppWhitelist: a.remoteRegionApps(r.Name)})
	}
	s := settings{store: st, maxBody: a.MaxBodySize, tls: tlsfiles.Files{CA: a.TLSCA, Cert: a.TLSCert, Key: a.TLSKey},
		peers: replication.Config{Peers: a.Peers, PeersDNS: a.PeersDNS, DNSResolver: a.DNSResolver,
			ResolveInterval: time.Duration(a.PeersResolveInterval), Self: a.SelfURL, MaxBatchDelay: time.Duration(a.MaxBatchDelay),
			MaxResponseBytes: int(a.MaxResponseSize), MaxResponseBytesSetting: "max_response_size"}}
	if len(a.Remote) > 0 {
		s.remote = &discovery.Config{ServiceURLs: a.Remote, Zone: a.Zone, RegistryFetchInterval: time.Duration(a.FetchInterval),
			DisableWatch: a.DisableWatch, MaxResponseBodySize: int(a.MaxResponseSize), MaxResponseBodySizeSetting: "max_response_size"}
	}
	return s
}

// remoteRegionApps returns the whitelist of the remote region name, nil
// for none of its own.
func (a *App) remoteRegionApps(name string) []string {
	for region, apps := range a.RemoteRegionApps {
		if strings.EqualFold(region, name) {
			return apps
		}
	}
	return nil
}

// Store returns the hosted registry, or nil in remote mode.
func (a *App) Store() *registry.Store { return a.entry.store }

// Client returns the remote-mode discovery client, or nil.
func (a *App) Client() *discovery.Client { return a.entry.client }

// Balancer returns the registry's balancer. It rotates with the same
// per-app round-robin counters as eureka_round_robin, which survive reloads
// with the registry.
func (a *App) Balancer() *balancer.Balancer { return a.entry.balancer }

// Instances returns the UP instances of app (matched case-insensitively)
// from the hosted registry or the remote client's cache. It takes no lock
// and does no I/O.
func (a *App) Instances(app string) []*eureka.InstanceInfo {
	return a.entry.instances.Instances(eureka.AppName(app))
}

// API returns a REST API over the hosted registry, also served under
// prefix (besides /eureka).
func (a *App) API(prefix string) (*httpapi.API, error) {
	if a.entry.store == nil {
		return nil, errors.New("the eureka app is in remote mode: it hosts no registry to serve")
	}
	cfg := httpapi.APIConfig{Prefix: prefix, MaxBodyBytes: a.MaxBodySize, Auth: a.authConfig()}
	if a.entry.peers != nil {
		// Caddy may start the http app before this one: reads wait for the
		// start-up sync, answered 503 meanwhile.
		cfg.Peers, cfg.Ready, cfg.Applying = a.entry.peers, a.entry.peers.Synced(), a.entry.peers.Copied()
	}
	return httpapi.NewAPI(a.entry.store, cfg), nil
}

// Interface guards
var (
	_ caddy.App          = (*App)(nil)
	_ caddy.Provisioner  = (*App)(nil)
	_ caddy.Validator    = (*App)(nil)
	_ caddy.CleanerUpper = (*App)(nil)
)

// routable returns the instances of up, app's UP instances, that requests
// may go to: those not failing their active health check.
func (a *App) routable(app string, up []*eureka.InstanceInfo) []*eureka.InstanceInfo {
	if a.checker == nil {
		return up
	}
	return a.checker.Filter(app, up)
}
