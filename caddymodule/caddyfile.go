package caddymodule

import (
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"
)

// eureka_server and eureka_dashboard come before respond, so that a site
// can answer its other paths with respond, file_server or reverse_proxy;
// eureka_gateway, which
// claims every /<app>/ path, comes just before reverse_proxy.
func init() {
	httpcaddyfile.RegisterGlobalOption("eureka", parseGlobalOption)
	httpcaddyfile.RegisterHandlerDirective("eureka_server", parseHandler(func() caddyhttp.MiddlewareHandler { return new(Server) }))
	httpcaddyfile.RegisterDirectiveOrder("eureka_server", httpcaddyfile.Before, "respond")
	httpcaddyfile.RegisterHandlerDirective("eureka_dashboard", parseHandler(func() caddyhttp.MiddlewareHandler { return new(Dashboard) }))
	httpcaddyfile.RegisterDirectiveOrder("eureka_dashboard", httpcaddyfile.Before, "respond")
	httpcaddyfile.RegisterHandlerDirective("eureka_gateway", parseHandler(func() caddyhttp.MiddlewareHandler { return new(Gateway) }))
	httpcaddyfile.RegisterDirectiveOrder("eureka_gateway", httpcaddyfile.Before, "reverse_proxy")
}

// parseGlobalOption parses the eureka global option into the eureka app:
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
//		peers <service_urls...>
//		self_url <service_url>
//		max_batch_delay <duration>
//		watch off
//		tls_ca <pem_file>
//		tls_cert <pem_file>
//		tls_key <pem_file>
//		health_interval <duration>
//		health_timeout <duration>
//		health_status <status>
//	}
func parseGlobalOption(d *caddyfile.Dispenser, _ any) (any, error) {
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
	for d.NextBlock(0) {
		var err error
		switch d.Val() {
		case "registry":
			err = oneArg(d, &a.Registry)
		case "remote":
			a.Remote = append(a.Remote, d.RemainingArgs()...)
			if len(a.Remote) == 0 {
				err = d.ArgErr()
			}
		case "fetch_interval":
			err = durationArg(d, &a.FetchInterval)
		case "zone":
			err = oneArg(d, &a.Zone)
		case "eviction_interval":
			err = durationArg(d, &a.EvictionInterval)
		case "self_preservation":
			var v string
			if err = oneArg(d, &v); err == nil {
				switch v {
				case "on":
					a.SelfPreservation = boolPtr(true)
				case "off":
					a.SelfPreservation = boolPtr(false)
				default:
					err = d.Errf("self_preservation must be on or off, got %q", v)
				}
			}
		case "renewal_percent_threshold":
			var v string
			if err = oneArg(d, &v); err == nil {
				if a.RenewalPercentThreshold, err = strconv.ParseFloat(v, 64); err != nil {
					err = d.Errf("renewal_percent_threshold: %v", err)
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
				size, perr := humanize.ParseBytes(v)
				if perr != nil {
					err = d.Errf("max_body_size: %v", perr)
				}
				a.MaxBodySize = int64(size)
			}
		case "peers":
			a.Peers = append(a.Peers, d.RemainingArgs()...)
			if len(a.Peers) == 0 {
				err = d.ArgErr()
			}
		case "self_url":
			err = oneArg(d, &a.SelfURL)
		case "max_batch_delay":
			err = durationArg(d, &a.MaxBatchDelay)
		case "watch":
			var v string
			if err = oneArg(d, &v); err == nil {
				switch v {
				case "off":
					a.DisableWatch = true
				case "on":
				default:
					err = d.Errf("watch: %q is neither on nor off", v)
				}
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
		default:
			err = d.Errf("unrecognized eureka option %q", d.Val())
		}
		if err != nil {
			return err
		}
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

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens:
//
//	eureka_dashboard {
//		path <path>
//		api_prefix <path>
//	}
//
// (A path right after the directive would be a request matcher.)
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
//		fail_duration <duration>
//		max_fails <n>
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
				g.Retries = &n
			}
		case "dial_timeout":
			err = durationArg(d, &g.DialTimeout)
		case "response_header_timeout":
			var v string
			if err = oneArg(d, &v); err == nil {
				if v == "off" {
					g.ResponseHeaderTimeout = -1
				} else {
					err = parseDuration(d, v, &g.ResponseHeaderTimeout)
				}
			}
		case "fail_duration":
			err = durationArg(d, &g.FailDuration)
		case "max_fails":
			err = intArg(d, &g.MaxFails)
		default:
			err = d.Errf("unrecognized eureka_gateway option %q", d.Val())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// UnmarshalCaddyfile sets up the source from Caddyfile tokens:
//
//	dynamic eureka <service>
func (u *Upstreams) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the module name
	if err := oneArg(d, &u.Service); err != nil {
		return err
	}
	if d.NextBlock(0) {
		return d.Errf("unrecognized eureka upstreams option %q", d.Val())
	}
	return nil
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

func noArgs(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

func intArg(d *caddyfile.Dispenser, dst *int) error {
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return d.Errf("%s: %v", d.Val(), err)
	}
	*dst = n
	return nil
}

func durationArg(d *caddyfile.Dispenser, dst *caddy.Duration) error {
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	return parseDuration(d, v, dst)
}

func parseDuration(d *caddyfile.Dispenser, v string, dst *caddy.Duration) error {
	dur, err := caddy.ParseDuration(v)
	if err != nil {
		return d.Errf("%s: %v", v, err)
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
