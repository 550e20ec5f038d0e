package caddymodule

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/eurekagate/eurekagate/internal/springeureka"
	"github.com/eurekagate/eurekagate/registry/regions/feeds"
)

// springSetter sets a Spring configuration's value (as cmd/eureka's flag
// of the same setting reads it) on the app, and reports false when the
// app's own option is set already, which wins.
type springSetter func(a *App, v string) (bool, error)

// springSetters are the settings of a Spring configuration that are
// options of the eureka app, by cmd/eureka's flag names.
var springSetters = map[string]springSetter{
	"self-preservation": func(a *App, v string) (bool, error) {
		if a.SelfPreservation != nil {
			return false, nil
		}
		b, err := strconv.ParseBool(v)
		a.SelfPreservation = boolPtr(b)
		return true, err
	},
	"renewal-percent-threshold": func(a *App, v string) (bool, error) {
		if a.RenewalPercentThreshold != 0 {
			return false, nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err == nil && (f <= 0 || f > 1) {
			err = fmt.Errorf("%v is not above 0 and at most 1", f)
		}
		a.RenewalPercentThreshold = f
		return true, err
	},
	"eviction-interval":                 durationSetter(func(a *App) *caddy.Duration { return &a.EvictionInterval }),
	"expected-client-renewal-interval":  durationSetter(func(a *App) *caddy.Duration { return &a.ExpectedClientRenewalInterval }),
	"renewal-threshold-update-interval": durationSetter(func(a *App) *caddy.Duration { return &a.RenewalThresholdUpdateInterval }),
	"delta-retention":                   durationSetter(func(a *App) *caddy.Duration { return &a.DeltaRetention }),
	"remote-region-fetch-interval":      durationSetter(func(a *App) *caddy.Duration { return &a.RemoteRegionFetchInterval }),
	"disable-delta":                     boolSetter(func(a *App) *bool { return &a.DisableDelta }),
	"disable-transparent-fallback":      boolSetter(func(a *App) *bool { return &a.DisableTransparentFallback }),
	"self-url":                          stringSetter(func(a *App) *string { return &a.SelfURL }),
	"region":                            stringSetter(func(a *App) *string { return &a.Region }),
	"peers": func(a *App, v string) (bool, error) {
		if len(a.Peers) > 0 {
			return false, nil
		}
		a.Peers = strings.Split(v, ",")
		return true, nil
	},
	"remote-regions": func(a *App, v string) (bool, error) {
		if len(a.RemoteRegions) > 0 {
			return false, nil
		}
		remotes, err := feeds.ParseRemotes(v)
		for _, r := range remotes {
			a.RemoteRegions = append(a.RemoteRegions, RemoteRegion{Name: r.Name, URLs: r.URLs})
		}
		return true, err
	},
	"remote-region-apps": func(a *App, v string) (bool, error) {
		region, apps, _ := strings.Cut(v, "=")
		if _, set := a.RemoteRegionApps[region]; set {
			return false, nil
		}
		if a.RemoteRegionApps == nil {
			a.RemoteRegionApps = map[string][]string{}
		}
		a.RemoteRegionApps[region] = strings.Split(apps, ",")
		return true, nil
	},
}

func durationSetter(field func(*App) *caddy.Duration) springSetter {
	return func(a *App, v string) (bool, error) {
		if *field(a) != 0 {
			return false, nil
		}
		d, err := time.ParseDuration(v)
		*field(a) = caddy.Duration(d)
		return true, err
	}
}

func boolSetter(field func(*App) *bool) springSetter {
	return func(a *App, v string) (bool, error) {
		if *field(a) {
			return false, nil
		}
		b, err := strconv.ParseBool(v)
		*field(a) = b
		return true, err
	}
}

func stringSetter(field func(*App) *string) springSetter {
	return func(a *App, v string) (bool, error) {
		if *field(a) != "" {
			return false, nil
		}
		*field(a) = v
		return true, nil
	}
}

// springElsewhere says where in Caddy the settings of a Spring
// configuration that are no options of the eureka app are made.
var springElsewhere = map[string]string{
	"addr":                    "the site's address in the Caddyfile is where the registry listens",
	"prefix":                  "eureka_server's prefix option",
	"dashboard-path":          "eureka_dashboard's path option",
	"tls-cert":                "the site's tls directive serves HTTPS",
	"tls-key":                 "the site's tls directive serves HTTPS",
	"tls-client-ca":           "the site's tls directive asks for client certificates",
	"tls-cert-password":       "the site's tls directive serves HTTPS",
	"tls-client-ca-password":  "the site's tls directive asks for client certificates",
	"auth-users":              "basic_auth in the site protects the registry",
	"auth-reads":              "basic_auth in the site protects the registry",
	"actuator":                "eureka_actuator's exposure option",
	"actuator-path":           "eureka_actuator's path option",
	"actuator-health-details": "eureka_actuator's show_details option",
	"management-addr":         "a site of its own in the Caddyfile serves eureka_actuator",
	"environment":             "the eureka app reports the environment test",
	"startup-sync-empty-wait": "the eureka app waits Eureka's default (5m)",
}

// applySpring reads SpringConfig, as cmd/eureka reads a Spring
// configuration (with Spring's environment variables), into the options
// left unset; the others win, and say so. Each property it does not
// apply is logged, and a value of the wrong type fails the start with
// its file:line and property.
func (a *App) applySpring() error {
	if a.SpringConfig == "" {
		return nil
	}
	s, err := springeureka.Read("", []string{"--spring.config.location=" + a.SpringConfig}, os.Environ(), func(string) bool { return false })
	if err != nil {
		return fmt.Errorf("spring_config: %w", err)
	}
	for _, n := range s.Notes {
		a.log.Warn(n)
	}
	if p, ok, _ := s.Conf.Lookup("eureka.instance.hostname"); ok {
		a.log.Warn(fmt.Sprintf("%s: %s: ignored in Caddy (no effect here: self_url names this node among its peers)", p.Source, p.Name))
	}
	for _, as := range s.Assign {
		set, ok := springSetters[as.Setting]
		if !ok {
			a.log.Warn(fmt.Sprintf("%s: ignored in Caddy (no effect here: %s)", as.From, springElsewhere[as.Setting]))
			continue
		}
		applied, err := set(a, as.Value)
		switch {
		case err != nil:
			return fmt.Errorf("spring_config: %s: %v", as.From, err)
		case !applied:
			a.log.Info(fmt.Sprintf("the eureka app's own option wins over %s", as.From))
		}
	}
	return nil
}
