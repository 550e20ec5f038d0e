package discovery

import (
	"crypto/tls"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/settings"
)

// Config configures a Client. Names and defaults follow Spring Cloud's
// eureka.client.* properties.
type Config struct {
	// ServiceURLs are the Eureka servers of the default zone, such as
	// "http://localhost:8761/eureka/". User info in a URL
	// (http://user:pass@host/eureka/) is sent as basic auth. Default
	// http://localhost:8761/eureka/.
	ServiceURLs []string
	// ZoneServiceURLs are the servers of other zones, by zone name.
	ZoneServiceURLs map[string][]string
	// Zone is this client's zone. With PreferSameZone (the default) its
	// servers are tried first.
	Zone string
	// DisablePreferSameZone tries the servers in the configured order
	// instead, starting with the first zone that is not Zone.
	DisablePreferSameZone bool

	// Region is this client's region (eureka.client.region): the fetched
	// instances placed in no remote region are its. Region names are
	// matched without regard to case. Default DefaultRegion, "us-east-1".
	Region string
	// FetchRemoteRegions are the remote regions whose instances to fetch
	// as well (eureka.client.fetchRemoteRegionsRegistry, which Java reads
	// as one comma-separated list; an entry here may hold several too).
	// Every full fetch, delta and watch then asks the server for them
	// (regions=...), the server merges their instances into its answer,
	// and the client keeps each region's apart: Instances, AllInstances
	// and Applications answer the local region, InstancesIn any of them.
	// The server must serve these regions (a Java or eurekagate server
	// configured with them); one that is not ready for one refuses the
	// fetch. Names are lower-cased; the local region, if listed, is
	// ignored. Default: none, and the requests are those of a client
	// without remote regions.
	FetchRemoteRegions []string
	// AvailabilityZones lists the zones of each region, by region name
	// (eureka.client.availabilityZones; an entry may hold several zones,
	// comma-separated). It places each fetched instance in a region: see
	// InstancesIn. Zones listed under a region that is neither Region nor
	// one of FetchRemoteRegions are ignored. Unlike Java's, it does not
	// order the Eureka servers: Zone and ZoneServiceURLs do. Default:
	// none, and a zone is placed by its name alone ("eu-west-1a" is in
	// eu-west-1).
	AvailabilityZones map[string][]string

	// RegistryFetchInterval is how often the local registry is refreshed
	// with a delta. Default 30s.
	RegistryFetchInterval time.Duration
	// DisableFetch turns the local registry off (fetchRegistry=false).
	DisableFetch bool
	// DisableDelta makes every refresh a full fetch.
	DisableDelta bool
	// DisableWatch turns the watch off. By default, when a server
	// advertises it (the Eurekagate-Watch header, which our servers send),
	// the client watches instead of polling: it asks for the changes after
	// the version it holds, the server holds the request until there is
	// one, and a change reaches the local registry within a round trip.
	// Against a server that does not advertise it (Java Eureka, an old
	// node) the client polls every RegistryFetchInterval, as Java does.
	DisableWatch bool
	// WatchWait is how long a server may hold a watch without a change.
	// Default 30s.
	WatchWait time.Duration
	// Apps limits the local registry to these applications, when the
	// server offers the watch: only their instances are fetched and only
	// their changes are sent. Default: the whole registry. A server
	// without the watch sends the whole registry anyway.
	Apps []string
	// LearnApps starts with an empty interest and adds each application
	// the first time Instances or AllInstances asks for it (a balancer
	// learns the apps it calls); the first call for an app returns nothing
	// and the app is fetched at once. It takes effect only when Apps is
	// empty and the server offers the watch.
	LearnApps bool

	// Instance is the instance to register. Nil registers nothing
	// (registerWithEureka=false).
	Instance *InstanceConfig

	// ExpBackOffBound caps the delay of a heartbeat or poll after ones that
	// timed out, at this many intervals. Default 10. As with the Java
	// client (its TimedSupervisorTask), only a timeout backs off, doubling
	// the delay each time, and a success resets it; after any other
	// failure (a refused connection, an error status) the next try comes
	// after the usual interval, so one failed heartbeat never puts the
	// lease at risk.
	ExpBackOffBound int
	// QuarantineDuration is how long a failing server is skipped. Default
	// 30s. When two thirds of the servers (66%, as Java) are quarantined,
	// the quarantine is cleared and they are all tried again.
	QuarantineDuration time.Duration
	// ServerReshuffleInterval is how often the client shuffles its servers
	// again (its zone's first, each group shuffled) and starts over with
	// the first, as a Java client does at each new session, so that
	// clients spread again over servers that came back. Each period is
	// drawn within ±50% of it. Default 20m (10 to 30 minutes), Java's
	// sessionedClientReconnectIntervalSeconds.
	ServerReshuffleInterval time.Duration
	// ConnectTimeout and ReadTimeout bound each request. Defaults 5s and 8s.
	ConnectTimeout, ReadTimeout time.Duration
	// MaxResponseBodySize is the largest answer accepted from a server, in
	// bytes as received and after gzip decoding; a larger full fetch
	// fails, naming MaxResponseBodySizeSetting, and the last registry is
	// kept. Default eurekahttp.DefaultMaxBodySize, 1 GiB: the registry of
	// one node at the scale it holds, a million instances of about 1 KiB.
	MaxResponseBodySize int
	// MaxResponseBodySizeSetting names MaxResponseBodySize as the host's
	// user sets it (a flag, a Caddy option), for the error and the log
	// line of an answer over it. Default "MaxResponseBodySize".
	MaxResponseBodySizeSetting string
	// MaxInstances, if above 0, bounds the instances the local registry
	// may hold: a full fetch, a delta or a watch's answer that would make
	// it larger fails (ErrTooManyInstances), and the last registry is
	// kept. Default 0: no bound (registry/regions/feeds sets one per remote
	// region).
	MaxInstances int

	// TLS configures the connections to https:// service URLs: the CAs
	// to trust (a private CA), the client certificate and key to present
	// to servers that require one, the server name to verify. Build one
	// with crypto/tls, or from PEM files with TLSFiles. Default: nil, the
	// system's roots and no client certificate.
	TLS *tls.Config

	// Logger receives the registration's state changes (registered,
	// re-registered after a 404, cancelled) at info level, once each as
	// the registry logs them (a status or metadata update of a registered
	// instance is a debug line, "registration updated"), and failed
	// fetches and heartbeats at warn level. Default: no logging.
	Logger *zap.Logger

	// clock is the time of the loops, for tests. Default the system's.
	clock clock
}

// InstanceConfig describes the registered instance. Names and defaults
// follow Spring Cloud's eureka.instance.* properties.
type InstanceConfig struct {
	// AppName is the application name; it is registered upper-cased.
	AppName string
	// InstanceID defaults to "hostname:appname:port", as Spring's.
	InstanceID string
	// HostName and IPAddr say where the instance is: clients and gateways
	// connect to HostName (or IPAddr if HostName is empty). IPAddr
	// defaults to the machine's first non-loopback IPv4 address, chosen as
	// Network says (127.0.0.1 only on a machine without one); HostName
	// defaults to the operating system's host name, or to IPAddr when
	// IPAddr is set or PreferIPAddress is.
	HostName, IPAddr string
	// PreferIPAddress registers IPAddr as the host name too, so that
	// clients connect to the address rather than to a host name they may
	// not resolve (Spring's eureka.instance.prefer-ip-address). Default:
	// false.
	PreferIPAddress bool
	// Network chooses the default IPAddr: interfaces to ignore, preferred
	// networks. Default: every interface and address.
	Network NetworkConfig
	// Port is the plain HTTP port. Default 8080.
	Port int
	// SecurePort is the HTTPS port, registered only if SecurePortEnabled.
	SecurePort        int
	SecurePortEnabled bool
	// VIPAddress and SecureVIPAddress default to the lower-case app name.
	VIPAddress, SecureVIPAddress string
	// HomePageURL, StatusPageURL and HealthCheckURL are opaque to Eureka;
	// dashboards link to them.
	HomePageURL, StatusPageURL, HealthCheckURL string
	// Metadata is registered with the instance (zone, weight, ...).
	Metadata map[string]string
	// Status is the initial status. Default UP, as Spring's initialStatus.
	Status eureka.Status
	// LeaseRenewalInterval is the heartbeat interval. Default 30s.
	LeaseRenewalInterval time.Duration
	// LeaseDuration is how long the server keeps the instance without a
	// heartbeat. Default 90s.
	LeaseDuration time.Duration
}

func (c Config) withDefaults() Config {
	if len(c.ServiceURLs) == 0 && len(c.ZoneServiceURLs) == 0 {
		c.ServiceURLs = []string{"http://localhost:8761/eureka/"}
	}
	c.Region = normRegion(c.Region)
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	c.FetchRemoteRegions = remoteRegions(c.FetchRemoteRegions, c.Region)
	settings.Default(&c.RegistryFetchInterval, DefaultRegistryFetchInterval)
	settings.Default(&c.QuarantineDuration, DefaultQuarantineDuration)
	settings.Default(&c.ServerReshuffleInterval, DefaultServerReshuffleInterval)
	if c.clock == nil {
		c.clock = systemClock{}
	}
	settings.Default(&c.ConnectTimeout, DefaultConnectTimeout)
	settings.Default(&c.ReadTimeout, DefaultReadTimeout)
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	settings.Default(&c.WatchWait, DefaultWatchWait)
	if c.ExpBackOffBound <= 0 {
		c.ExpBackOffBound = DefaultExpBackOffBound
	}
	if c.Instance != nil {
		ic := *c.Instance
		ic.fill()
		c.Instance = &ic
	}
	return c
}

func (ic *InstanceConfig) fill() {
	ic.defaultAddress(systemInterfaces)
	if ic.Port == 0 {
		ic.Port = DefaultPort
	}
	lower := strings.ToLower(ic.AppName)
	if ic.InstanceID == "" {
		ic.InstanceID = ic.HostName + ":" + lower + ":" + strconv.Itoa(ic.Port)
	}
	if ic.VIPAddress == "" {
		ic.VIPAddress = lower
	}
	if ic.SecureVIPAddress == "" {
		ic.SecureVIPAddress = lower
	}
	if ic.Status == eureka.StatusUnknown {
		ic.Status = eureka.StatusUp
	}
	settings.Default(&ic.LeaseRenewalInterval, eureka.DefaultRenewalIntervalInSecs*time.Second)
	settings.Default(&ic.LeaseDuration, eureka.DefaultDurationInSecs*time.Second)
}

// instance renders the registration document.
func (ic *InstanceConfig) instance(lastDirty int64) *eureka.InstanceInfo {
	md := make(map[string]string, len(ic.Metadata))
	for k, v := range ic.Metadata {
		md[k] = v
	}
	return &eureka.InstanceInfo{
		InstanceID: ic.InstanceID, HasInstanceID: true,
		HostName: ic.HostName, App: strings.ToUpper(ic.AppName), IPAddr: ic.IPAddr, SID: "na",
		Status: ic.Status, OverriddenStatus: eureka.StatusUnknown,
		Port:       eureka.Port{Number: ic.Port, Enabled: true},
		SecurePort: eureka.Port{Number: ic.SecurePort, Enabled: ic.SecurePortEnabled},
		CountryID:  1, DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
		LeaseInfo: eureka.LeaseInfo{
			RenewalIntervalInSecs: int(ic.LeaseRenewalInterval.Seconds()),
			DurationInSecs:        int(ic.LeaseDuration.Seconds()),
		},
		Metadata:    md,
		HomePageURL: ic.HomePageURL, StatusPageURL: ic.StatusPageURL, HealthCheckURL: ic.HealthCheckURL,
		VIPAddress: ic.VIPAddress, SecureVIPAddress: ic.SecureVIPAddress,
		LastDirtyTimestamp: lastDirty, LastUpdatedTimestamp: lastDirty,
	}
}
