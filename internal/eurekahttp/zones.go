package eurekahttp

import (
	"math/rand/v2"
	"slices"

	"github.com/eurekagate/eurekagate/eureka"
)

// ZonedServers are a client's Eureka servers by zone, as the Java client's
// eureka.client.serviceUrl and availabilityZones settings give them.
type ZonedServers struct {
	// DefaultZone are the service URLs of the default zone
	// (serviceUrl.defaultZone). They count as MyZone's when MyZone is
	// empty or has no servers of its own.
	DefaultZone []string
	// Zones are service URLs by zone name, MyZone's included.
	Zones map[string][]string
	// MyZone is the client's own zone.
	MyZone string
	// DisablePreferSameZone puts the other zones' servers first
	// (preferSameZoneEureka=false). By default MyZone's come first.
	DisablePreferSameZone bool
}

// Order parses the service URLs and orders them as the Java client's
// resolver does: MyZone's servers first (last with
// DisablePreferSameZone), each of the two groups shuffled with rnd, so
// that clients spread over the servers of a zone. A nil rnd uses the
// global generator. An invalid URL is an error.
func (z ZonedServers) Order(rnd *rand.Rand) ([]eureka.ServiceURL, error) {
	shuffle := rand.Shuffle
	if rnd != nil {
		shuffle = rnd.Shuffle
	}
	var mine, others []string
	if z.MyZone == "" || z.Zones[z.MyZone] == nil {
		mine = append(mine, z.DefaultZone...)
	} else {
		others = append(others, z.DefaultZone...)
	}
	// A fixed zone order before shuffling, so that a seeded rnd gives a
	// reproducible order.
	zones := make([]string, 0, len(z.Zones))
	for name := range z.Zones {
		zones = append(zones, name)
	}
	slices.Sort(zones)
	for _, name := range zones {
		if name == z.MyZone {
			mine = append(mine, z.Zones[name]...)
		} else {
			others = append(others, z.Zones[name]...)
		}
	}
	shuffle(len(mine), func(i, j int) { mine[i], mine[j] = mine[j], mine[i] })
	shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
	ordered := slices.Concat(mine, others)
	if z.DisablePreferSameZone {
		ordered = slices.Concat(others, mine)
	}
	out := make([]eureka.ServiceURL, 0, len(ordered))
	for _, raw := range ordered {
		u, err := eureka.ParseServiceURL(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}
