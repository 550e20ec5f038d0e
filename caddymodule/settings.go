package caddymodule

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions/feeds"
	"github.com/eurekagate/eurekagate/registry/replication"
	"github.com/eurekagate/eurekagate/routing"
)

// The eureka app's options that apply to one mode only: a hosted
// registry's, and remote mode's. Setting one in the other mode is refused,
// since it would be ignored.
var (
	localOnly = []string{
		"eviction_interval", "self_preservation", "renewal_percent_threshold",
		"expected_client_renewal_interval", "renewal_threshold_update_interval",
		"delta_retention", "override_idle_expiry", "disable_delta", "legacy_lease_expiry",
		"max_body_size", "peers", "peers_dns", "dns_resolver", "peers_resolve_interval", "self_url", "max_batch_delay",
		"region", "remote_regions", "remote_region_apps", "remote_region_fetch_interval",
		"remote_region_retention", "disable_transparent_fallback",
		"remote_region_max_bytes", "remote_region_max_instances",
	}
	remoteOnly = []string{"fetch_interval", "zone", "watch", "disable_watch"}
)

// durationDefaults are the defaults that error messages suggest leaving
// an option out for.
var durationDefaults = map[string]string{
	"fetch_interval":                    formatDuration(discovery.DefaultRegistryFetchInterval),
	"eviction_interval":                 formatDuration(registry.DefaultEvictionInterval),
	"expected_client_renewal_interval":  formatDuration(registry.DefaultExpectedClientRenewalInterval),
	"renewal_threshold_update_interval": formatDuration(registry.DefaultRenewalThresholdUpdateInterval),
	"delta_retention":                   formatDuration(registry.DefaultDeltaRetention),
	"override_idle_expiry":              formatDuration(registry.DefaultOverrideIdleExpiry),
	"remote_region_fetch_interval":      formatDuration(registry.DefaultRemoteRegionFetchInterval),
	"remote_region_retention":           formatDuration(registry.DefaultRemoteRegionRetention),
	"peers_resolve_interval":            formatDuration(replication.DefaultResolveInterval),
	"health_timeout":                    formatDuration(balancer.DefaultCheckTimeout),
	"dial_timeout":                      formatDuration(routing.DefaultDialTimeout),
	"response_header_timeout":           formatDuration(routing.DefaultResponseHeaderTimeout),
	"read_timeout":                      formatDuration(routing.DefaultReadTimeout),
	"fail_duration":                     formatDuration(routing.DefaultFailDuration),
}

// checkDuration refuses a duration that is not positive (or, with
// zeroOK, negative), naming the option, the value and the fix.
func checkDuration(option string, d time.Duration, zeroOK bool) error {
	if d > 0 || (d == 0 && zeroOK) {
		return nil
	}
	want := "a positive duration, such as 30s"
	if zeroOK {
		want = "zero or a positive duration"
	}
	fix := ""
	if def, ok := durationDefaults[option]; ok {
		fix = "; leave " + option + " out for the default, " + def
	}
	return fmt.Errorf("%s %s must be %s%s", option, formatDuration(d), want, fix)
}

// checkServiceURL refuses a URL that clients could not use, naming the
// option, the value and the fix.
func checkServiceURL(option, raw string) error {
	if err := feeds.CheckURL(raw); err != nil {
		return fmt.Errorf("%s: %w", option, err)
	}
	return nil
}

// checkURLs checks the app's remote, peer and self URLs.
func (a *App) checkURLs() error {
	for _, u := range a.Remote {
		if err := checkServiceURL("remote", u); err != nil {
			return err
		}
	}
	for _, u := range a.Peers {
		if err := checkServiceURL("peers", u); err != nil {
			return err
		}
	}
	for _, u := range a.PeersDNS {
		if err := replication.CheckDNSName(u); err != nil {
			return fmt.Errorf("peers_dns: %w", err)
		}
	}
	if len(a.PeersDNS) == 0 && (a.DNSResolver != "" || a.PeersResolveInterval != 0) {
		return errors.New("dns_resolver and peers_resolve_interval apply to peers_dns, which is not set; add peers_dns <dns_urls...>, or remove them")
	}
	if a.SelfURL != "" {
		return checkServiceURL("self_url", a.SelfURL)
	}
	return nil
}

// checkRegions refuses remote regions that could not be read or
// whitelists that name no remote region: each region named once, not as
// the registry's own region nor global, with service URLs; and bounds on
// them that would be ignored (checkRegionBounds).
func (a *App) checkRegions() error {
	if err := a.checkRegionBounds(); err != nil {
		return err
	}
	own := a.Region
	if own == "" {
		own = registry.DefaultRegion
	}
	var names []string
	for _, r := range a.RemoteRegions {
		name := strings.ToLower(strings.TrimSpace(r.Name))
		switch {
		case name == "":
			return errors.New("remote_regions: a region without a name; give each region its name and service URLs")
		case name == "global":
			return errors.New("remote_regions: global is not a region's name; remote_region_apps global lists the apps of every region")
		case strings.EqualFold(name, own):
			return fmt.Errorf("remote_regions: %s is this registry's own region; a remote region is another one", r.Name)
		case slices.Contains(names, name):
			return fmt.Errorf("remote_regions: %s is listed twice; give it one entry with all its service URLs", r.Name)
		case len(r.URLs) == 0:
			return fmt.Errorf("remote_regions: %s needs at least one service URL, such as http://eureka.%s:8761/eureka/", r.Name, name)
		}
		for _, u := range r.URLs {
			if err := checkServiceURL("remote_regions "+r.Name, u); err != nil {
				return err
			}
		}
		names = append(names, name)
	}
	var seen []string
	for region, apps := range a.RemoteRegionApps {
		key := strings.ToLower(region)
		switch {
		case key != "global" && !slices.Contains(names, key):
			return fmt.Errorf("remote_region_apps: %s is not one of remote_regions (%s) or global", region, strings.Join(names, ", "))
		case slices.Contains(seen, key):
			return fmt.Errorf("remote_region_apps: %s is listed twice", region)
		case len(apps) == 0:
			return fmt.Errorf("remote_region_apps: %s lists no app; leave it out for every app", region)
		}
		seen = append(seen, key)
	}
	return nil
}

// checkMode refuses settings of the mode the app is not in, which would
// be ignored.
func (a *App) checkMode() error {
	set := a.options()
	if len(a.Remote) > 0 {
		for _, name := range localOnly {
			if _, ok := set[name]; ok {
				return fmt.Errorf("%s applies to a hosted registry and would be ignored with remote; remove it, or remove remote to host the registry", name)
			}
		}
		return nil
	}
	for _, name := range remoteOnly {
		if _, ok := set[name]; ok {
			return fmt.Errorf("%s applies to remote mode only and would be ignored without remote; remove it, or add remote <service URLs>", name)
		}
	}
	return nil
}

// options returns the app's options that are set, by their JSON (and
// Caddyfile) names, as text: durations as 30s, lists space-separated.
func (a *App) options() map[string]string {
	out := map[string]string{}
	v := reflect.ValueOf(a).Elem()
	for n := range v.NumField() {
		f := v.Type().Field(n)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || v.Field(n).IsZero() {
			continue
		}
		switch x := v.Field(n).Interface().(type) {
		case caddy.Duration:
			out[name] = formatDuration(time.Duration(x))
		case *bool:
			out[name] = map[bool]string{true: "on", false: "off"}[*x]
		case []string:
			out[name] = strings.Join(x, " ")
		case []RemoteRegion:
			var parts []string
			for _, r := range x {
				parts = append(parts, r.Name+" "+strings.Join(r.URLs, " "))
			}
			out[name] = strings.Join(parts, "; ")
		case map[string][]string:
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(x)) {
				parts = append(parts, k+" "+strings.Join(x[k], " "))
			}
			out[name] = strings.Join(parts, "; ")
		default:
			out[name] = fmt.Sprint(x)
		}
	}
	return out
}

// registryOptions are the options a registry is created with: all but
// its name, the active health checks, how the remote regions are read
// (their service URLs, remote_region_fetch_interval and the bounds) and
// the peers (peers, peers_dns, applied to the running registry at Start)
// and allowed_hosts (its handlers'), which belong to each config; the
// remote regions' names are the registry's.
func (a *App) registryOptions() map[string]string {
	opts := a.options()
	for _, name := range []string{"registry", "health_interval", "health_timeout", "health_status", "remote_region_fetch_interval",
		"remote_region_max_bytes", "remote_region_max_instances", "peers", "peers_dns", "allowed_hosts"} {
		delete(opts, name)
	}
	if len(a.RemoteRegions) > 0 {
		var names []string
		for _, r := range a.RemoteRegions {
			names = append(names, strings.ToLower(r.Name))
		}
		opts["remote_regions"] = strings.Join(names, " ")
	}
	return opts
}

// diffOptions lists the options that differ between a running registry's
// and a new config's, as "name (running: x, new: y)".
func diffOptions(running, next map[string]string) []string {
	var names []string
	for name := range running {
		names = append(names, name)
	}
	for name := range next {
		if _, ok := running[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	show := func(m map[string]string, name string) string {
		if v, ok := m[name]; ok {
			return v
		}
		return "default"
	}
	var out []string
	for _, name := range names {
		if running[name] != next[name] {
			out = append(out, fmt.Sprintf("%s (running: %s, new: %s)", name, show(running, name), show(next, name)))
		}
	}
	return out
}

// formatDuration writes d as a Caddyfile would: 1m rather than 1m0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
