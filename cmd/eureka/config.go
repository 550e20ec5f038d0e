package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/samber/lo"

	"github.com/eurekagate/eurekagate/fxmodules"
	"github.com/eurekagate/eurekagate/fxmodules/xdsmodule"
	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/internal/eurekahttp"
	"github.com/eurekagate/eurekagate/internal/springeureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/regions/feeds"
	"github.com/eurekagate/eurekagate/registry/replication"
	"github.com/eurekagate/eurekagate/routing"
)

// options are the server's settings, from flags or EUREKA_* environment
// variables (a flag wins over the variable).
type options struct {
	registry      fxmodules.RegistryConfig
	server        httpapi.ServerConfig
	dashboardPath string // "" serves no dashboard
	hashPassword  string // print the hash of this password and exit
	version       bool   // print the version and exit
	// memoryLimit is the Go runtime's soft memory limit in bytes
	// (debug.SetMemoryLimit); 0 leaves the runtime's (GOMEMLIMIT).
	memoryLimit int64
	// The gateway, served beside the registry when gatewayServer.Addr is
	// set; its Instances are the registry's.
	gateway       gateway.Config
	gatewayServer gateway.ServerConfig
	gatewayRules  fxmodules.GatewayRules
	// gatewayAccessLog is where the gateway's access log goes: a file's
	// path, "stdout", or "" for none. main opens it into
	// gateway.AccessLog.
	gatewayAccessLog string
	// auditLog is -audit-log: the audit trail's file, "stdout", or ""
	// for none; auditOption opens it.
	auditLog string
	// gatewayRedis is -gateway-redis, the shared rate limits' Redis;
	// main makes gatewayRules.Limits.Shared of it.
	gatewayRedis string
	// peersFile is -peers-file, re-read while the server runs; nil for
	// none.
	peersFile *peersFile
	// springNotes are the Spring properties read and not applied, one
	// line each (ignored, with why; unknown, with the closest name), and
	// what loading the files did that a user may not expect: main logs
	// them as warnings. overrides are the settings two of our names and
	// Spring's gave a value, which won: main logs them.
	springNotes, overrides []string
	actuator               actuatorOptions
	// printConfig is -print-config's text: every setting, its value
	// and where it came from; main prints it and exits.
	printConfig string
	// xds is the xDS server, served when its Addr is set.
	xds xdsmodule.Config
}

// parseOptions reads flags and EUREKA_<FLAG> variables alone, without a
// Spring configuration: the tests of the flags.
func parseOptions(args []string, getenv func(string) string, usage io.Writer) (*options, error) {
	return parseConfig(args, getenv, nil, "", usage)
}

// parseConfig reads the settings: Spring's configuration (application.yml
// and the rest in dir, the variables of environ in Spring's form, the
// --name.with.dots=value arguments; see internal/springeureka), then our EUREKA_<FLAG>
// variables (-eviction-interval as EUREKA_EVICTION_INTERVAL), Spring's
// arguments and our flags, each over the ones before. dir "" reads no
// Spring configuration.
func parseConfig(args []string, getenv func(string) string, environ []string, dir string, usage io.Writer) (*options, error) {
	o, spring, err := parseLayers(args, getenv, environ, dir, usage)
	return o, spring.blame(err)
}

func parseLayers(args []string, getenv func(string) string, environ []string, dir string, usage io.Writer) (*options, *springSettings, error) {
	var o options
	st := &o.registry.Store
	fs := flag.NewFlagSet("eureka", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&o.server.Addr, "addr", ":8761", "listen address")
	allowedHosts := fs.String("allowed-hosts", "", "comma-separated HOST[:PORT] whose requests a registry that listens on loopback only without credentials answers besides loopback names and its own (against DNS rebinding: requests with other Host headers get 403); a host without a port matches any port")
	fs.StringVar(&o.registry.API.Prefix, "prefix", "", "extra path prefix for the REST API, besides /eureka")
	fs.Int64Var(&o.registry.API.MaxBodyBytes, "max-body-bytes", httpapi.DefaultMaxBodyBytes, "request body limit in bytes (larger bodies get 413)")
	fs.IntVar(&o.server.MaxHeaderBytes, "max-header-bytes", httpapi.DefaultMaxHeaderBytes, "limit of a request's line and headers in bytes (larger get 431); each request on its way in holds a buffer this large")
	selfPreservation := fs.Bool("self-preservation", true, "suspend evictions when renews fall below the threshold")
	fs.Float64Var(&st.RenewalPercentThreshold, "renewal-percent-threshold", registry.DefaultRenewalPercentThreshold, "share of expected renews below which self-preservation starts")
	fs.DurationVar(&st.ExpectedClientRenewalInterval, "expected-client-renewal-interval", registry.DefaultExpectedClientRenewalInterval, "heartbeat interval clients are assumed to use")
	fs.DurationVar(&st.RenewalThresholdUpdateInterval, "renewal-threshold-update-interval", registry.DefaultRenewalThresholdUpdateInterval, "how often the expected renew count is recounted")
	fs.DurationVar(&st.EvictionInterval, "eviction-interval", registry.DefaultEvictionInterval, "how often expired leases are evicted")
	fs.DurationVar(&st.DeltaRetention, "delta-retention", registry.DefaultDeltaRetention, "how long changes stay in the delta")
	fs.DurationVar(&st.OverrideIdleExpiry, "override-idle-expiry", registry.DefaultOverrideIdleExpiry, "how long an unused status override is kept")
	fs.BoolVar(&st.DisableDelta, "disable-delta", false, "answer 403 to delta fetches")
	fs.Int64Var(&st.MaxPlainPayload, "max-plain-payload", registry.DefaultMaxPlainPayload, "largest full registry or delta kept serialized as read plain, in bytes, once a client has read one plain; a larger one, or one no client reads plain, is kept gzipped only and inflated for plain readers (negative: always plain)")
	fs.DurationVar(&st.PrebuildDelay, "prebuild-delay", registry.DefaultPrebuildDelay, "how long the registry must go without a change before the full registry and the delta (JSON, and XML while read in the last 5 minutes; gzip forms included) are built ahead of their next reader, so that a fleet's reads after a mass registration find them built (negative: never, the first reader builds)")
	fs.BoolVar(&st.LegacyLeaseExpiry, "legacy-lease-expiry", false, "reproduce Eureka's doubled lease timeout (for clusters mixed with Java servers)")
	fs.StringVar(&o.registry.API.Environment, "environment", "test", "the environment GET /eureka/status reports")
	fs.StringVar(&st.InstanceID, "instance-id", "", "this server's own instance id, reported as the coordinating discovery server")
	peers := fs.String("peers", "", "comma-separated service URLs of the other registry nodes (user:password@ for peers that need credentials)")
	fs.StringVar(&o.registry.Peers.Self, "self-url", "", "this node's own service URL, to recognise it among -peers")
	fs.IntVar(&o.registry.Peers.MaxResponseBytes, "max-response-bytes", eurekahttp.DefaultMaxBodySize, "largest answer read from a peer (its registry at the start-up sync, a batch's results), as received and gzip-decoded, in bytes: a guard against a hostile peer, sized for a million instances")
	o.registry.Peers.MaxResponseBytesSetting = "-max-response-bytes"
	fs.DurationVar(&o.registry.Peers.StartupSyncTimeout, "startup-sync-timeout", replication.DefaultStartupSyncTimeout, "how long the start-up sync asks the peers again after errors (a peer's registry over -max-response-bytes, a timeout, a 5xx) before giving up; reads are answered 503 meanwhile")
	fs.DurationVar(&o.registry.Peers.StartupSyncEmptyWait, "startup-sync-empty-wait", replication.DefaultStartupSyncEmptyWait, "after a start-up sync that got only errors, how long from the start reads stay refused (503) while the peers' replication fills the registry (Eureka's waitTimeInMsWhenSyncEmpty)")
	fs.DurationVar(&o.registry.Peers.MaxBatchDelay, "max-batch-delay", 0, "how long a replication task waits for others to join its batch (default 0: sent at once, batched while a batch is in flight)")
	var rf regionFlags
	rf.register(fs, &o)
	var pf peerFlags
	pf.register(fs, &o)

	fs.StringVar(&o.dashboardPath, "dashboard-path", "/", `where the dashboard is served ("off" for none)`)
	users := fs.String("auth-users", "", "comma-separated user:bcrypt-hash accounts; when set, writes need HTTP basic auth")
	peerAuth := fs.String("peer-auth", "", "user:bcrypt-hash of the credential peers must use for replication")
	fs.BoolVar(&o.registry.API.Auth.RequireForReads, "auth-reads", false, "make reads need credentials too")
	var authz authzFlags
	authz.register(fs, &o)
	var tlsOpts tlsFlags
	tlsOpts.register(fs)
	var act actuatorFlags
	act.register(fs, &o)
	var xdsOpts xdsFlags
	xdsOpts.register(fs)
	fs.StringVar(&o.hashPassword, "hash-password", "", "print the bcrypt hash of this password, for -auth-users, and exit")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	printConfig := fs.Bool("print-config", false, "print every setting, its value and where it came from (a flag, a variable, a file's line of the Spring configuration, or the default), and exit")
	memLimit := fs.String("memory-limit", "", `soft memory limit of the process, as "3.5GiB" or bytes: the collector works harder as the heap nears it (debug.SetMemoryLimit); none by default, or GOMEMLIMIT's`)

	fs.StringVar(&o.gatewayServer.Addr, "gateway", "", "also serve the gateway on this address: /<app>/<rest> goes to /<rest> on an UP instance of <app>")
	fs.IntVar(&o.gateway.Routing.Retries, "gateway-retries", routing.DefaultRetries, "how many other instances a failed request is tried on (negative for none)")
	fs.DurationVar(&o.gateway.Routing.DialTimeout, "gateway-dial-timeout", routing.DefaultDialTimeout, "limit on connecting to an instance")
	fs.DurationVar(&o.gateway.Routing.ResponseHeaderTimeout, "gateway-response-header-timeout", routing.DefaultResponseHeaderTimeout, "limit on waiting for an instance's response header once the request is sent; a timeout takes the instance out of rotation (negative for none)")
	fs.DurationVar(&o.gateway.Routing.ReadTimeout, "gateway-read-timeout", routing.DefaultReadTimeout, "how long an instance may stay silent while its response body streams or the request is sent to it (as nginx's proxy_read_timeout)")
	fs.Int64Var(&o.gateway.MaxRequestBodySize, "gateway-max-body-bytes", gateway.DefaultMaxRequestBodySize, "largest request body the gateway forwards (larger get 413; negative for no limit)")
	proxies := fs.String("gateway-trusted-proxies", "", "comma-separated CIDRs of proxies in front of the gateway whose X-Forwarded-* headers are kept")
	fs.BoolVar(&o.gateway.RewriteHost, "gateway-rewrite-host", false, "send the instance's host:port as Host instead of the client's")
	fs.StringVar(&o.gatewayRules.File, "gateway-rules", "", "traffic rules of the gateway (YAML or JSON, see docs/gateway.md): re-read when the file changes, also when it is replaced by a rename, and applied once the next check finds it unchanged; a document that does not parse or is past a -gateway-rules-max-* limit is refused with its file and line, and the rules in force stay. With -xds, also served to gRPC clients (docs/grpc-and-envoy.md)")
	lim := &o.gatewayRules.Limits
	fs.IntVar(&lim.MaxBytes, "gateway-rules-max-bytes", routing.DefaultRulesMaxBytes, "largest -gateway-rules document, in bytes")
	fs.IntVar(&lim.MaxRules, "gateway-rules-max-rules", routing.DefaultRulesMaxRules, "most rules in the -gateway-rules document, all apps together")
	fs.IntVar(&lim.MaxRegexSize, "gateway-rules-max-regex-size", routing.DefaultRulesMaxRegexSize, "most instructions the regular expressions of the -gateway-rules document compile to, together ([a-z]{1,64} is 127); a match costs up to 256 bytes of a value times its expression's size")
	fs.IntVar(&lim.MaxEcho, "gateway-rules-max-echo", routing.DefaultRulesMaxEcho, "longest piece (a key, a value) of a refused -gateway-rules document that the refusal quotes, in bytes; a longer one is cut")
	fs.DurationVar(&o.gatewayServer.HeaderTimeout, "gateway-header-timeout", gateway.DefaultHeaderTimeout, "limit on a client's request header as a whole, from its first byte (as nginx's client_header_timeout)")
	fs.StringVar(&o.gatewayRedis, "gateway-redis", "", "Redis of the -gateway-rules limits with shared: true, one limit across the gateways that share it: redis://[[user]:password@]HOST:PORT[/DB], rediss:// for TLS (go-redis's ParseURL; the password never logged). Without it, shared: true is refused")
	fs.StringVar(&o.gatewayAccessLog, "gateway-access-log", "", "write the gateway's access log, a JSON line per request with the fields of Caddy's (see docs/gateway.md), to this file (appended to) or to stdout; lines are written within a second, and dropped when the writer falls behind")
	failover := fs.String("gateway-failover-regions", "", "comma-separated remote regions (of -remote-regions), in order, whose instances take an app's requests when the local region has none that can take them; the local region takes them back as soon as it has one (default: none, the local region only)")
	// The standalone server owns its process: its gateway keeps a
	// processor free for the rest of it (gateway.ServerConfig.SpareProcessor).
	o.gatewayServer.SpareProcessor = true
	fs.IntVar(&o.gatewayServer.Loops, "gateway-loops", 0, "event loops serving simple requests (no body, no Upgrade, a response of known length up to 64 KiB) without a goroutine per connection; 0 for GOMAXPROCS, negative for none (fasthttp serves every connection)")

	ourArgs, springArgs := splitSpringArgs(args)
	var spring *springSettings
	if dir != "" {
		ours := func(v string) bool {
			name, ok := strings.CutPrefix(v, "EUREKA_")
			return ok && fs.Lookup(strings.ToLower(strings.ReplaceAll(name, "_", "-"))) != nil
		}
		settings, err := springeureka.Read(dir, springArgs, environ, ours)
		if err != nil {
			return nil, nil, err
		}
		spring = &springSettings{settings}
		o.springNotes = spring.Notes
	} else if len(springArgs) > 0 {
		return nil, nil, fmt.Errorf("unexpected arguments: %v", springArgs)
	}
	src := map[string]string{}
	set := func(f string, from string) {
		if prev, ok := src[f]; ok {
			o.overrides = append(o.overrides, fmt.Sprintf("-%s: %s wins over %s", f, from, prev))
		}
		src[f] = from
	}
	if err := spring.apply(fs, src); err != nil {
		return nil, spring, err
	}
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "version" {
			return // EUREKA_VERSION may well describe a deployment
		}
		name := "EUREKA_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" && envErr == nil {
			if err := f.Value.Set(v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", name, v, err)
			}
			set(f.Name, "variable "+name)
		}
	})
	if envErr != nil {
		return nil, spring, envErr
	}
	for _, a := range spring.args() {
		if err := fs.Lookup(a.Setting).Value.Set(a.Value); err != nil {
			return nil, spring, fmt.Errorf("%s: %v", a.From, err)
		}
		set(a.Setting, a.From)
	}
	if err := fs.Parse(ourArgs); err != nil {
		return nil, spring, err
	}
	if fs.NArg() > 0 {
		return nil, spring, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	fs.Visit(func(f *flag.Flag) { set(f.Name, "flag -"+f.Name) })
	st.DisableSelfPreservation = !*selfPreservation
	if o.dashboardPath == "off" {
		o.dashboardPath = ""
	}
	o.server.AllowedHosts = splitList(*allowedHosts)
	if err := httpapi.ParseAllowedHosts(o.server.AllowedHosts); err != nil {
		return nil, spring, fmt.Errorf("-allowed-hosts: %v", err)
	}
	auth := &o.registry.API.Auth
	for _, entry := range splitList(*users) {
		a, err := parseAccount(entry)
		if err != nil {
			return nil, spring, fmt.Errorf("-auth-users: %v", err)
		}
		auth.Users = append(auth.Users, a)
	}
	if *peerAuth != "" {
		a, err := parseAccount(*peerAuth)
		if err != nil {
			return nil, spring, fmt.Errorf("-peer-auth: %v", err)
		}
		auth.Peer = &a
	}
	authz.apply(&o)
	if err := auth.Check(); err != nil {
		return nil, spring, err
	}
	if err := tlsOpts.apply(&o); err != nil {
		return nil, spring, err
	}
	if err := authz.checkTLS(&tlsOpts); err != nil {
		return nil, spring, err
	}
	if err := act.apply(&o); err != nil {
		return nil, spring, err
	}
	if err := xdsOpts.apply(&o); err != nil {
		return nil, spring, err
	}
	if err := checkPrefix(o.registry.API.Prefix, o.dashboardPath, o.actuator.path); err != nil {
		return nil, spring, err
	}
	if o.gatewayRules.File != "" && o.gatewayServer.Addr == "" {
		return nil, spring, errors.New("-gateway-rules is set without -gateway: the rules are the gateway's")
	}
	for _, l := range []struct {
		name string
		v    int
	}{{"max-bytes", lim.MaxBytes}, {"max-rules", lim.MaxRules}, {"max-regex-size", lim.MaxRegexSize}, {"max-echo", lim.MaxEcho}} {
		if l.v <= 0 {
			return nil, spring, fmt.Errorf("-gateway-rules-%s is %d: a limit is above 0", l.name, l.v)
		}
	}
	if o.gatewayRules.File == "" && *lim != (routing.RulesLimits{}).WithDefaults() {
		return nil, spring, errors.New("a -gateway-rules-max-* limit is set without -gateway-rules: the limits are the rules file's")
	}
	if o.gatewayRedis != "" && o.gatewayRules.File == "" {
		return nil, spring, errors.New("-gateway-redis is set without -gateway-rules: Redis holds the rules' shared limits")
	}
	if o.gatewayAccessLog != "" && o.gatewayServer.Addr == "" {
		return nil, spring, errors.New("-gateway-access-log is set without -gateway: the log is the gateway's")
	}
	if err := rf.apply(fs, &o); err != nil {
		return nil, spring, err
	}
	if err := failoverRegions(&o, *failover); err != nil {
		return nil, spring, err
	}
	if err := xdsOpts.applyRegions(&o); err != nil {
		return nil, spring, err
	}
	for _, p := range splitList(*proxies) {
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return nil, spring, fmt.Errorf("-gateway-trusted-proxies: %v", err)
			}
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		o.gateway.Routing.TrustedProxies = append(o.gateway.Routing.TrustedProxies, prefix)
	}
	o.registry.Peers.Peers = splitList(*peers)
	for _, u := range o.registry.Peers.Peers {
		if err := checkURL("-peers", u); err != nil {
			return nil, spring, err
		}
	}
	if err := pf.apply(fs, &o); err != nil {
		return nil, spring, err
	}
	if self := o.registry.Peers.Self; self != "" {
		if err := checkURL("-self-url", self); err != nil {
			return nil, spring, err
		}
	}
	if _, port, err := net.SplitHostPort(o.server.Addr); err == nil {
		// Peers listed as this host's loopback address are this node,
		// and so are those of eureka.instance.hostname.
		o.registry.Peers.SelfAddrs = []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port}
		if spring != nil && spring.SelfHost != "" {
			o.registry.Peers.SelfAddrs = append(o.registry.Peers.SelfAddrs, net.JoinHostPort(spring.SelfHost, port))
		}
	}
	if t := st.RenewalPercentThreshold; t <= 0 || t > 1 {
		return nil, spring, fmt.Errorf("-renewal-percent-threshold must be in (0, 1], got %v", t)
	}
	if *memLimit != "" {
		n, err := humanize.ParseBytes(*memLimit)
		if err != nil || n == 0 || n > math.MaxInt64 {
			return nil, spring, fmt.Errorf("-memory-limit %q: give a size such as 3.5GiB or a number of bytes", *memLimit)
		}
		o.memoryLimit = int64(n)
	}
	if *printConfig {
		o.printConfig = effectiveConfig(fs, src, spring, o.overrides)
	}
	return &o, spring, nil
}

// checkPrefix refuses an API prefix (or a dashboard or actuator path)
// that would put the dashboard, /metrics or the actuator under the API,
// which answers every path under /eureka and its prefix: -prefix / would
// hide them all.
func checkPrefix(prefix, dashboardPath, actuatorPath string) error {
	prefixes := []string{"/eureka"}
	if prefix != "" {
		prefixes = append(prefixes, "/"+strings.Trim(prefix, "/"))
	}
	pages := [][2]string{{"/metrics", "/metrics"}}
	if dashboardPath != "" {
		pages = append(pages, [2]string{"/" + strings.Trim(dashboardPath, "/"), "the dashboard"})
	}
	pages = append(pages, [2]string{actuatorPath, "the actuator endpoints"})
	for _, p := range prefixes {
		for _, page := range pages {
			if path := page[0]; p == "/" || path == p || strings.HasPrefix(path, p+"/") {
				return fmt.Errorf("the REST API under %s would hide %s (%s); give -prefix, -dashboard-path or -actuator-path a path of its own, such as -prefix /registry", p, page[1], path)
			}
		}
	}
	return nil
}

// parseAccount reads "user:bcrypt-hash".
func parseAccount(entry string) (httpapi.Account, error) {
	user, hash, ok := strings.Cut(entry, ":")
	if !ok || user == "" || !strings.HasPrefix(hash, "$2") {
		return httpapi.Account{}, fmt.Errorf("%q is not user:bcrypt-hash (make a hash with -hash-password)", entry)
	}
	return httpapi.Account{Username: user, PasswordHash: hash}, nil
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(v string) []string {
	return lo.Compact(lo.Map(strings.Split(v, ","), func(s string, _ int) string { return strings.TrimSpace(s) }))
}

// checkURL refuses a peer URL that does not parse, naming the flag, the
// value and the fix, before fx reports it as a failed constructor.
func checkURL(flagName, raw string) error {
	if err := feeds.CheckURL(raw); err != nil {
		return fmt.Errorf("%s: %w", flagName, err)
	}
	return nil
}

// regionFlags are the remote regions' settings: the regions and their
// URLs, their whitelists, and the flags that apply only with them.
type regionFlags struct {
	remotes string
	apps    []string // -remote-region-apps values, as given
}

func (r *regionFlags) register(fs *flag.FlagSet, o *options) {
	st := &o.registry.Store
	fs.StringVar(&st.Region, "region", registry.DefaultRegion, "this registry's region (eureka.region): its own instances' region, as reads with regions= and -gateway-failover-regions tell them from the remote regions'")
	fs.StringVar(&r.remotes, "remote-regions", "", "comma-separated name=URL service URLs of the remote regions this registry serves on request (GET /eureka/apps?regions=name, as Java's remoteRegionUrlsWithName; name;URL is read too, and a name repeated adds a URL): each region's registry is read whole, without registering, watched on our servers and read every -remote-region-fetch-interval on others, over -tls-ca and -tls-cert for https://")
	fs.Func("remote-region-apps", "REGION=APP,APP: the apps of a remote region that reads with regions= merge in (remoteRegion.<region>.appWhiteList), REGION global for every region without a list of its own; repeatable, or several joined with ;. Without one, every app", func(v string) error {
		r.apps = append(r.apps, v)
		return nil
	})
	fs.DurationVar(&o.registry.RemoteRegions.FetchInterval, "remote-region-fetch-interval", registry.DefaultRemoteRegionFetchInterval, "how often a remote region whose servers offer no watch (Java Eureka) is read again")
	fs.IntVar(&o.registry.RemoteRegions.MaxRegionBytes, "remote-region-max-bytes", registry.DefaultMaxRegionBytes, "the largest answer accepted from a remote region's servers, in bytes after gzip decoding; a larger one is refused, the region's last registry kept and its state says why")
	fs.IntVar(&o.registry.RemoteRegions.MaxRegionInstances, "remote-region-max-instances", registry.DefaultMaxRegionInstances, "the most instances a remote region's registry may hold; a larger one is refused, the region's last registry kept and its state says why")
	fs.DurationVar(&st.RemoteRegionRetention, "remote-region-retention", registry.DefaultRemoteRegionRetention, "how long a remote region that stopped answering keeps serving its last registry; then its instances are dropped until it answers again")
	fs.BoolVar(&st.DisableTransparentFallback, "disable-transparent-fallback", false, "answer GET /eureka/apps/{app} 404 for an app the local region has no instance of, instead of a remote region's copy of it")
}

// apply reads the remote regions and their whitelists into o, after the
// TLS flags: the regions are read with the TLS configuration of the
// peers.
func (r *regionFlags) apply(fs *flag.FlagSet, o *options) error {
	st := &o.registry.Store
	remotes, err := feeds.ParseRemotes(r.remotes)
	if err != nil {
		return fmt.Errorf("-remote-regions: %v", err)
	}
	if len(remotes) == 0 {
		var stray []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "remote-region-apps", "remote-region-fetch-interval", "remote-region-retention", "disable-transparent-fallback",
				"remote-region-max-bytes", "remote-region-max-instances":
				stray = append(stray, "-"+f.Name)
			}
		})
		if len(stray) > 0 {
			return fmt.Errorf("%s set without -remote-regions: they apply to remote regions; add -remote-regions name=URL", strings.Join(stray, ", "))
		}
		return nil
	}
	for _, b := range []struct {
		flag     string
		v, deflt int
	}{
		{"remote-region-max-bytes", o.registry.RemoteRegions.MaxRegionBytes, registry.DefaultMaxRegionBytes},
		{"remote-region-max-instances", o.registry.RemoteRegions.MaxRegionInstances, registry.DefaultMaxRegionInstances},
	} {
		if b.v <= 0 {
			return fmt.Errorf("-%s %d must be above 0; leave it out for the default, %d", b.flag, b.v, b.deflt)
		}
	}
	whitelists := map[string][]string{}
	for _, v := range r.apps {
		for entry := range strings.SplitSeq(v, ";") {
			if entry = strings.TrimSpace(entry); entry == "" {
				continue
			}
			name, list, ok := strings.Cut(entry, "=")
			name = strings.ToLower(strings.TrimSpace(name))
			apps := splitList(list)
			switch {
			case !ok || name == "":
				return fmt.Errorf("-remote-region-apps: %q names no region; write it as REGION=APP,APP, such as %s=ORDERS,USERS (global for every region)", entry, remotes[0].Name)
			case len(apps) == 0:
				return fmt.Errorf("-remote-region-apps: %q lists no app; leave the region out for every app", entry)
			case name != "global" && !lo.ContainsBy(remotes, func(rr feeds.Remote) bool { return rr.Name == name }):
				return fmt.Errorf("-remote-region-apps: %q is not one of -remote-regions (%s) or global", name,
					strings.Join(lo.Map(remotes, func(rr feeds.Remote, _ int) string { return rr.Name }), ", "))
			}
			whitelists[name] = append(whitelists[name], apps...)
		}
	}
	st.RemoteRegionAppWhitelist = whitelists["global"]
	for _, rr := range remotes {
		if strings.EqualFold(rr.Name, st.Region) {
			return fmt.Errorf("-remote-regions: %s is this registry's own -region; a remote region is another one", rr.Name)
		}
		st.RemoteRegions = append(st.RemoteRegions, registry.RemoteRegion{Name: rr.Name, AppWhitelist: whitelists[rr.Name]})
	}
	o.registry.RemoteRegions.Remotes = remotes
	o.registry.RemoteRegions.TLS = o.registry.Peers.TLS
	return nil
}

// failoverRegions reads -gateway-failover-regions into the gateway's
// routing: remote regions, each once, which needs -gateway.
func failoverRegions(o *options, v string) error {
	names := splitList(v)
	if len(names) == 0 {
		return nil
	}
	if o.gatewayServer.Addr == "" {
		return errors.New("-gateway-failover-regions is set without -gateway: the regions are the gateway's")
	}
	if err := remoteRegionList(o, "-gateway-failover-regions", names); err != nil {
		return err
	}
	o.gateway.Routing.FailoverRegions = names
	return nil
}

// remoteRegionList checks that names, lower-cased in place, are remote
// regions of -remote-regions, each once; flag names the setting.
func remoteRegionList(o *options, flag string, names []string) error {
	remote := o.registry.Store.RemoteRegions
	for n, name := range names {
		name = strings.ToLower(name)
		names[n] = name
		switch {
		case !lo.ContainsBy(remote, func(r registry.RemoteRegion) bool { return r.Name == name }):
			return fmt.Errorf("%s: %q is not one of -remote-regions, which it would read its instances from", flag, name)
		case lo.Contains(names[:n], name):
			return fmt.Errorf("%s: %q is listed twice", flag, name)
		}
	}
	return nil
}
