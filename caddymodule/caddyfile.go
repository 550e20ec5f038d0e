package caddymodule

import (
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"

	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// eureka_server and eureka_dashboard come before respond, so that a site
// can answer its other paths with respond, file_server or reverse_proxy;
// eureka_actuator before eureka_dashboard, whose path / would take its
// paths; eureka_gateway, which
// claims every /<app>/ path, comes just before reverse_proxy.
func init() {
	httpcaddyfile.RegisterGlobalOption("eureka", parseGlobalOption)
	httpcaddyfile.RegisterHandlerDirective("eureka_server", parseHandler(func() caddyhttp.MiddlewareHandler { return new(Server) }))
	httpcaddyfile.RegisterDirectiveOrder("eureka_server", httpcaddyfile.Before, "respond")
	// Each directive ordered before respond goes after those ordered so
	// earlier: eureka_actuator is ordered before eureka_dashboard is.
	httpcaddyfile.RegisterHandlerDirective("eureka_actuator", parseHandler(func() caddyhttp.MiddlewareHandler { return new(Actuator) }))
	httpcaddyfile.RegisterDirectiveOrder("eureka_actuator", httpcaddyfile.Before, "respond")
	httpcaddyfile.RegisterDirective("eureka_dashboard", parseDashboard)
	httpcaddyfile.RegisterDirectiveOrder("eureka_dashboard", httpcaddyfile.Before, "respond")
	httpcaddyfile.RegisterHandlerDirective("eureka_gateway", parseHandler(func() caddyhttp.MiddlewareHandler { return new(Gateway) }))
	httpcaddyfile.RegisterDirectiveOrder("eureka_gateway", httpcaddyfile.Before, "reverse_proxy")
}

// parseGlobalOption parses the eureka global option into the eureka app.
// The option may appear once, and takes either the hosted registry's
// options or remote and its own (fetch_interval, zone, watch); registry
// and the health options apply to both:
//
//	eureka {
//		registry <name>
//		remote <service_urls...>
//		fetch_interval <duration>
//		zone <zone>
//		eviction_interval <duration>
//		self_preservation on|off
//		renewal_percent_threshold <0..1>
//		expected_client_renewal_interval <duration>
//		renewal_threshold_update_interval <duration>
//		delta_retention <duration>
//		override_idle_expiry <duration>
//		disable_delta
//		legacy_lease_expiry
//		max_body_size <size>
//		allowed_hosts <host[:port]...>
//		max_response_size <size>
//		peers <service_urls...>
//		peers_dns <dns_urls...>
//		dns_resolver <host:port>
//		peers_resolve_interval <duration>
//		self_url <service_url>
//		max_batch_delay <duration>
//		region <region>
//		remote_regions [<region> <service_urls...>] {
//			<region> <service_urls...>
//		}
//		remote_region_apps <region>|global <apps...>
//		remote_region_fetch_interval <duration>
//		remote_region_retention <duration>
//		remote_region_max_bytes <size>
//		remote_region_max_instances <n>
//		disable_transparent_fallback
//		watch off
//		tls_ca <pem_file>
//		tls_cert <pem_file>
//		tls_key <pem_file>
//		health_interval <duration>
//		health_timeout <duration>
//		health_status <status>
//		xds <listen address> { ... } (see XDS)
//		auth_apps <user>|cert:<name> <apps...> (see Authz)
//		auth_operators <users...>
//		audit_log <path>|stdout
//		redis <url>
//		spare_processor on|off
//		heap_floor <size>|off
//	}
func parseGlobalOption(d *caddyfile.Dispenser, existing any) (any, error) {
	if existing != nil {
		d.Next()
		return nil, d.Err("the eureka global option appears twice, and the second block would replace the first; merge them into one eureka block")
	}
	app := new(App)
	if err := app.UnmarshalCaddyfile(d); err != nil {
		return nil, err
	}
	return httpcaddyfile.App{Name: "eureka", Value: caddyconfig.JSON(app, nil)}, nil
}

// UnmarshalCaddyfile sets up the app from Caddyfile tokens.
func (a *App) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the option name
	if d.NextArg() {
		return d.ArgErr()
	}
	type place struct {
		name, at string
	}
	var set []place // the options, in order, with their file:line
	for d.NextBlock(0) {
		var err error
		set = append(set, place{d.Val(), fmt.Sprintf("%s:%d", d.File(), d.Line())})
		switch d.Val() {
		case "registry":
			err = oneArg(d, &a.Registry)
		case "spring_config":
			err = oneArg(d, &a.SpringConfig)
		case "remote":
			err = urlArgs(d, &a.Remote)
		case "fetch_interval":
			err = durationArg(d, &a.FetchInterval)
		case "zone":
			err = oneArg(d, &a.Zone)
		case "eviction_interval":
			err = durationArg(d, &a.EvictionInterval)
		case "self_preservation":
			var on bool
			if err = onOffArg(d, "self_preservation", &on); err == nil {
				a.SelfPreservation = boolPtr(on)
			}
		case "renewal_percent_threshold":
			var v string
			if err = oneArg(d, &v); err == nil {
				a.RenewalPercentThreshold, err = strconv.ParseFloat(v, 64)
				if t := a.RenewalPercentThreshold; err != nil || t <= 0 || t > 1 {
					err = d.Errf("renewal_percent_threshold %q must be a number above 0 and at most 1, such as 0.85 (the default)", v)
				}
			}
		case "expected_client_renewal_interval":
			err = durationArg(d, &a.ExpectedClientRenewalInterval)
		case "renewal_threshold_update_interval":
			err = durationArg(d, &a.RenewalThresholdUpdateInterval)
		case "delta_retention":
			err = durationArg(d, &a.DeltaRetention)
		case "override_idle_expiry":
			err = durationArg(d, &a.OverrideIdleExpiry)
		case "disable_delta":
			a.DisableDelta, err = true, noArgs(d)
		case "legacy_lease_expiry":
			a.LegacyLeaseExpiry, err = true, noArgs(d)
		case "max_body_size":
			var v string
			if err = oneArg(d, &v); err == nil {
				a.MaxBodySize, err = parseSize(d, "max_body_size", v, "512KiB or 1MiB (the default)")
			}
		case "max_response_size":
			var v string
			if err = oneArg(d, &v); err == nil {
				a.MaxResponseSize, err = parseSize(d, "max_response_size", v, "512MiB or 1GiB (the default)")
			}
		case "allowed_hosts":
			if a.AllowedHosts = d.RemainingArgs(); len(a.AllowedHosts) == 0 {
				err = d.ArgErr()
			} else if perr := httpapi.ParseAllowedHosts(a.AllowedHosts); perr != nil {
				err = d.Errf("allowed_hosts: %v", perr)
			}
		case "peers":
			err = urlArgs(d, &a.Peers)
		case "peers_dns":
			err = dnsArgs(d, &a.PeersDNS)
		case "dns_resolver":
			if err = oneArg(d, &a.DNSResolver); err == nil {
				if host, port, serr := net.SplitHostPort(a.DNSResolver); serr != nil || host == "" || port == "" {
					err = d.Errf("dns_resolver %q: give the DNS server as host:port, such as 10.96.0.10:53", a.DNSResolver)
				}
			}
		case "peers_resolve_interval":
			var v string
			if err = oneArg(d, &v); err == nil {
				if err = parseDuration(d, "peers_resolve_interval", v, &a.PeersResolveInterval); err == nil {
					if err = checkDuration("peers_resolve_interval", time.Duration(a.PeersResolveInterval), false); err != nil {
						err = d.WrapErr(err)
					}
				}
			}
		case "self_url":
			if err = oneArg(d, &a.SelfURL); err == nil {
				if err = checkServiceURL("self_url", a.SelfURL); err != nil {
					err = d.WrapErr(err)
				}
			}
		case "max_batch_delay":
			var v string
			if err = oneArg(d, &v); err == nil {
				if err = parseDuration(d, "max_batch_delay", v, &a.MaxBatchDelay); err == nil {
					if err = checkDuration("max_batch_delay", time.Duration(a.MaxBatchDelay), true); err != nil {
						err = d.WrapErr(err)
					}
				}
			}
		case "region":
			err = oneArg(d, &a.Region)
		case "remote_regions":
			err = a.unmarshalRemoteRegions(d)
		case "remote_region_apps":
			args := d.RemainingArgs()
			if len(args) < 2 {
				err = d.Errf("remote_region_apps takes a remote region (or global) and its apps, such as remote_region_apps eu-west-1 ORDERS USERS")
				break
			}
			if a.RemoteRegionApps == nil {
				a.RemoteRegionApps = map[string][]string{}
			}
			region := strings.ToLower(args[0])
			a.RemoteRegionApps[region] = append(a.RemoteRegionApps[region], args[1:]...)
		case "remote_region_fetch_interval":
			err = durationArg(d, &a.RemoteRegionFetchInterval)
		case "remote_region_retention":
			err = durationArg(d, &a.RemoteRegionRetention)
		case "remote_region_max_bytes":
			err = sizeArg(d, &a.RemoteRegionMaxBytes)
		case "remote_region_max_instances":
			err = maxInstancesArg(d, &a.RemoteRegionMaxInstances)
		case "disable_transparent_fallback":
			a.DisableTransparentFallback, err = true, noArgs(d)
		case "watch":
			var on bool
			if err = onOffArg(d, "watch", &on); err == nil && !on {
				a.DisableWatch = true
			}
		case "tls_ca":
			err = oneArg(d, &a.TLSCA)
		case "tls_cert":
			err = oneArg(d, &a.TLSCert)
		case "tls_key":
			err = oneArg(d, &a.TLSKey)
		case "health_interval":
			err = durationArg(d, &a.HealthInterval)
		case "health_timeout":
			err = durationArg(d, &a.HealthTimeout)
		case "health_status":
			err = statusArg(d, &a.HealthStatus)
		case "xds":
			err = a.parseXDS(d)
		case "auth_apps", "auth_operators", "audit_log":
			err = a.parseAuthz(d)
		case "redis":
			err = oneArg(d, &a.Redis)
		case "spare_processor":
			var on bool
			if err = onOffArg(d, "spare_processor", &on); err == nil {
				a.SpareProcessor = boolPtr(on)
			}
		case "heap_floor":
			err = heapFloorArg(d, &a.HeapFloor)
		default:
			err = d.Errf("unrecognized eureka option %q", d.Val())
		}
		if err != nil {
			return err
		}
	}
	// Options of the other mode would be ignored: refuse them where they are.
	for _, p := range set {
		if (len(a.Remote) > 0 && slices.Contains(localOnly, p.name)) || (len(a.Remote) == 0 && slices.Contains(remoteOnly, p.name)) {
			if err := a.checkMode(); err != nil {
				return fmt.Errorf("%w, at %s", err, p.at)
			}
		}
	}
	// Remote regions that could not be read, at the last region option.
	if err := a.checkRegions(); err != nil {
		at := ""
		for _, p := range set {
			if p.name == "region" || p.name == "remote_regions" || p.name == "remote_region_apps" {
				at = p.at
			}
		}
		return fmt.Errorf("%w, at %s", err, at)
	}
	return nil
}

// unmarshalRemoteRegions reads remote_regions: a region and its service
// URLs on the option's line, or one a line in its block, or both; a
// region that comes again adds URLs to its entry.
func (a *App) unmarshalRemoteRegions(d *caddyfile.Dispenser) error {
	add := func(args []string) error {
		if len(args) < 2 {
			return d.Errf("remote_regions takes a region and its service URLs, such as eu-west-1 http://eureka.eu-west-1:8761/eureka/, got %q", strings.Join(args, " "))
		}
		for _, u := range args[1:] {
			if err := checkServiceURL("remote_regions "+args[0], u); err != nil {
				return d.WrapErr(err)
			}
		}
		name := strings.ToLower(args[0])
		for n := range a.RemoteRegions {
			if a.RemoteRegions[n].Name == name {
				a.RemoteRegions[n].URLs = append(a.RemoteRegions[n].URLs, args[1:]...)
				return nil
			}
		}
		a.RemoteRegions = append(a.RemoteRegions, RemoteRegion{Name: name, URLs: args[1:]})
		return nil
	}
	given := false
	if args := d.RemainingArgs(); len(args) > 0 {
		if err := add(args); err != nil {
			return err
		}
		given = true
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		if err := add(append([]string{d.Val()}, d.RemainingArgs()...)); err != nil {
			return err
		}
		given = true
	}
	if !given {
		return d.Errf("remote_regions needs a region and its service URLs, such as remote_regions eu-west-1 http://eureka.eu-west-1:8761/eureka/")
	}
	return nil
}

// urlArgs appends the remaining arguments to dst, each checked as a
// service URL.
func urlArgs(d *caddyfile.Dispenser, dst *[]string) error {
	option := d.Val()
	n := 0
	for d.NextArg() {
		if err := checkServiceURL(option, d.Val()); err != nil {
			return d.WrapErr(err)
		}
		*dst = append(*dst, d.Val())
		n++
	}
	if n == 0 {
		return d.Errf("%s needs at least one service URL, such as http://eureka-1:8761/eureka/", option)
	}
	return nil
}

// dnsArgs reads the peers' DNS names of peers_dns into dst.
func dnsArgs(d *caddyfile.Dispenser, dst *[]string) error {
	n := 0
	for d.NextArg() {
		if err := replication.CheckDNSName(d.Val()); err != nil {
			return d.WrapErr(err)
		}
		*dst = append(*dst, d.Val())
		n++
	}
	if n == 0 {
		return d.Errf("peers_dns needs at least one DNS name, such as http://eureka-peers:8761/eureka/ or srv://eureka-peers/eureka/")
	}
	return nil
}

// parseHandler adapts a handler's UnmarshalCaddyfile to a directive.
func parseHandler(newHandler func() caddyhttp.MiddlewareHandler) httpcaddyfile.UnmarshalHandlerFunc {
	return func(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
		m := newHandler()
		err := m.(caddyfile.Unmarshaler).UnmarshalCaddyfile(h.Dispenser)
		return m, err
	}
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens:
//
//	eureka_server [<matcher>] {
//		prefix <path>
//	}
func (s *Server) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "prefix":
			if err := oneArg(d, &s.Prefix); err != nil {
				return err
			}
		default:
			return d.Errf("unrecognized eureka_server option %q", d.Val())
		}
	}
	return nil
}

// parseDashboard is the eureka_dashboard directive: a handler directive,
// except that a path right after the directive name, which Caddy would
// take for a request matcher (and the dashboard would then answer nothing
// there), is refused with the fix.
func parseDashboard(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
	if !h.Next() {
		return nil, h.ArgErr()
	}
	if h.NextArg() {
		if v := h.Val(); strings.HasPrefix(v, "/") {
			return nil, h.Errf("eureka_dashboard %s: a path here is a request matcher, and the dashboard would still be served at /, not at %s; "+
				"set where it is served with path %s inside an eureka_dashboard block", v, v, v)
		}
		h.Prev()
	}
	matchers, err := h.ExtractMatcherSet()
	if err != nil {
		return nil, err
	}
	d := new(Dashboard)
	if err := d.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return h.NewRoute(matchers, d), nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens:
//
//	eureka_dashboard [<named matcher>] {
//		path <path>
//		api_prefix <path>
//	}
func (d *Dashboard) UnmarshalCaddyfile(disp *caddyfile.Dispenser) error {
	disp.Next() // the directive name
	if disp.NextArg() {
		return disp.ArgErr()
	}
	for disp.NextBlock(0) {
		switch disp.Val() {
		case "path":
			if err := oneArg(disp, &d.Path); err != nil {
				return err
			}
		case "api_prefix":
			if err := oneArg(disp, &d.APIPrefix); err != nil {
				return err
			}
		default:
			return disp.Errf("unrecognized eureka_dashboard option %q", disp.Val())
		}
	}
	return nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens:
//
//	eureka_gateway [<matcher>] {
//		lb_retries <n>
//		dial_timeout <duration>
//		response_header_timeout <duration>|off
//		read_timeout <duration>
//		fail_duration <duration>
//		max_fails <n>
//		tls_trusted_ca_certs <pem_files...>
//		rules <file>|<<heredoc
//		rules_max_bytes|rules_max_rules|rules_max_regex_size|rules_max_echo <n>
//		request_id on|off
//		failover_regions <regions...>
//		transport eureka|reverse_proxy
//	}
func (g *Gateway) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		var err error
		switch d.Val() {
		case "lb_retries":
			var n int
			if err = intArg(d, &n); err == nil {
				if err = checkRetries(n); err != nil {
					err = d.WrapErr(err)
				}
				g.Retries = &n
			}
		case "dial_timeout":
			err = durationArg(d, &g.DialTimeout)
		case "response_header_timeout":
			var v string
			if err = oneArg(d, &v); err == nil {
				if v == "off" {
					g.ResponseHeaderTimeout = -1
				} else if err = parseDuration(d, "response_header_timeout", v, &g.ResponseHeaderTimeout); err == nil {
					if err = checkDuration("response_header_timeout", time.Duration(g.ResponseHeaderTimeout), false); err != nil {
						err = d.Errf("%v, or off for none", err)
					}
				}
			}
		case "read_timeout":
			err = durationArg(d, &g.ReadTimeout)
		case "fail_duration":
			err = durationArg(d, &g.FailDuration)
		case "max_fails":
			if err = intArg(d, &g.MaxFails); err == nil {
				if err = checkMaxFails(g.MaxFails); err != nil {
					err = d.WrapErr(err)
				}
			}
		case "tls_trusted_ca_certs":
			if g.TLSTrustedCACerts = append(g.TLSTrustedCACerts, d.RemainingArgs()...); len(g.TLSTrustedCACerts) == 0 {
				err = d.Errf("tls_trusted_ca_certs needs PEM files of certificate authorities")
			}
		case "request_id":
			var v string
			if err = oneArg(d, &v); err == nil {
				switch v {
				case "on":
					g.RequestID = boolPtr(true)
				case "off":
					g.RequestID = boolPtr(false)
				default:
					err = d.Errf("request_id takes on or off, got %q", v)
				}
			}
		case "failover_regions":
			if g.FailoverRegions = append(g.FailoverRegions, d.RemainingArgs()...); len(g.FailoverRegions) == 0 {
				err = d.Errf("failover_regions needs the remote regions to fail over to, in order, such as failover_regions eu-west-1 ap-south-1")
			}
		case "transport":
			if err = oneArg(d, &g.Transport); err == nil {
				if err = checkTransport(g.Transport); err != nil {
					err = d.WrapErr(err)
				}
			}
		case rulesOption(d.Val()):
			err = g.unmarshalRules(d)
		default:
			err = d.Errf("unrecognized eureka_gateway option %q", d.Val())
		}
		if err != nil {
			return err
		}
	}
	return g.adaptRules(d)
}

// UnmarshalCaddyfile sets up the source from Caddyfile tokens:
//
//	dynamic eureka <service> [secure] {
//		rules <file>|<<heredoc
//		rules_max_bytes|rules_max_rules|rules_max_regex_size|rules_max_echo <n>
//	}
func (u *Upstreams) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the module name
	args := d.RemainingArgs()
	switch {
	case len(args) == 2 && args[1] == "secure":
		u.Service, u.Secure = args[0], true
	case len(args) == 1:
		u.Service = args[0]
	default:
		return d.Errf("dynamic eureka takes an application name and optionally secure (dynamic eureka orders secure), got %q", strings.Join(args, " "))
	}
	for d.NextBlock(0) {
		if rulesOption(d.Val()) == "" {
			return d.Errf("unrecognized eureka upstreams option %q", d.Val())
		}
		if err := u.unmarshalRules(d); err != nil {
			return err
		}
	}
	return u.adaptRules(d)
}

// UnmarshalCaddyfile sets up the policy from Caddyfile tokens:
//
//	lb_policy eureka_round_robin
func (rr *RoundRobin) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the policy name
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

// UnmarshalCaddyfile sets up the policy from Caddyfile tokens:
//
//	lb_policy eureka_least_requests
func (lr *LeastRequests) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the policy name
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

func oneArg(d *caddyfile.Dispenser, dst *string) error {
	if !d.AllArgs(dst) {
		return d.ArgErr()
	}
	return nil
}

// onOffArg reads option's one argument, on or off, into dst.
func onOffArg(d *caddyfile.Dispenser, option string, dst *bool) error {
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	switch v {
	case "on":
		*dst = true
	case "off":
		*dst = false
	default:
		return d.Errf("%s must be on or off, got %q", option, v)
	}
	return nil
}

func noArgs(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

func intArg(d *caddyfile.Dispenser, dst *int) error {
	option := d.Val()
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return d.Errf("%s %q is not a whole number", option, v)
	}
	*dst = n
	return nil
}

// sizeArg reads a size in bytes above 0 (1048576, 64MiB) into dst.
func sizeArg(d *caddyfile.Dispenser, dst *int) error {
	option := d.Val()
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	size, err := parseSize(d, option, v, "64MiB")
	*dst = int(size)
	return err
}

// parseSize parses v, option's size in bytes above 0 (1048576, 64MiB),
// or says it is not one, with examples of sizes.
func parseSize(d *caddyfile.Dispenser, option, v, examples string) (int64, error) {
	size, err := humanize.ParseBytes(v)
	if err != nil || size == 0 || size > math.MaxInt {
		return 0, d.Errf("%s %q is not a size; write a number of bytes or a size such as %s", option, v, examples)
	}
	return int64(size), nil
}

// durationArg reads a positive duration into dst.
func durationArg(d *caddyfile.Dispenser, dst *caddy.Duration) error {
	option := d.Val()
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	if err := parseDuration(d, option, v, dst); err != nil {
		return err
	}
	if err := checkDuration(option, time.Duration(*dst), false); err != nil {
		return d.WrapErr(err)
	}
	return nil
}

func parseDuration(d *caddyfile.Dispenser, option, v string, dst *caddy.Duration) error {
	dur, err := caddy.ParseDuration(v)
	if err != nil {
		return d.Errf("%s %q is not a duration; write one such as 30s, 5m or 1h", option, v)
	}
	*dst = caddy.Duration(dur)
	return nil
}

// statusArg reads a status code (503) or class (5xx, or 5) into dst.
func statusArg(d *caddyfile.Dispenser, dst *int) error {
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	if len(v) == 3 && strings.HasSuffix(v, "xx") {
		v = v[:1]
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 999 || (n >= 10 && n < 100) {
		return d.Errf("health_status must be a status code or a class such as 2xx, got %q", d.Val())
	}
	*dst = n
	return nil
}

func boolPtr(b bool) *bool { return &b }

// Interface guards
var (
	_ caddyfile.Unmarshaler = (*App)(nil)
	_ caddyfile.Unmarshaler = (*Server)(nil)
	_ caddyfile.Unmarshaler = (*Gateway)(nil)
	_ caddyfile.Unmarshaler = (*Dashboard)(nil)
	_ caddyfile.Unmarshaler = (*Upstreams)(nil)
	_ caddyfile.Unmarshaler = (*RoundRobin)(nil)
	_ caddyfile.Unmarshaler = (*LeastRequests)(nil)
)
