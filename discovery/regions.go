package discovery

import (
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/eurekagate/eurekagate/eureka"
)

// Remote regions: with FetchRemoteRegions, the server's answers hold the
// instances of those regions too, merged per application, and the client
// sorts them back out by zone, as Java's InstanceRegionChecker does, into
// one registry per region. The reconcile hash of the answers covers them
// all, and so does the cache's count, so a delta that leaves any region
// wrong makes a full fetch.

// InstancesIn returns the UP instances of app in region, sorted by id:
// the local region's (as Instances) when region is Region or "", a
// remote region's when it is one of FetchRemoteRegions, nil for any
// other. Like Instances it reads the current snapshot, with no lock and
// no I/O, and the result must not be modified.
//
// A fetched instance's zone is its "availability-zone" when its data
// center is Amazon (AmazonInfo), else its metadata "zone" (what Spring
// Cloud instances set). Its region is the one whose AvailabilityZones
// list holds that zone; else, when the zone minus its last character is
// one of FetchRemoteRegions (the AWS style, "eu-west-1a" in eu-west-1),
// that region; else, as for an instance without a zone, the local
// region.
func (c *Client) InstancesIn(app, region string) []*eureka.InstanceInfo {
	region = normRegion(region)
	if region == "" || region == c.cfg.Region {
		return c.Instances(app)
	}
	if a := c.snap.Load().remote[region][app]; a != nil {
		return a.up
	}
	if slices.Contains(c.cfg.FetchRemoteRegions, region) {
		c.learn(app)
	}
	return nil
}

// Regions returns the regions the client holds instances of: Region
// first, then FetchRemoteRegions, lower-cased and sorted. Without remote
// regions it is Region alone.
func (c *Client) Regions() []string {
	return append([]string{c.cfg.Region}, c.cfg.FetchRemoteRegions...)
}

// normRegion is a region name as the client compares them.
func normRegion(r string) string { return strings.ToLower(strings.TrimSpace(r)) }

// remoteRegions is FetchRemoteRegions as the client uses it: split at
// commas (as Java's property is), lower-cased, sorted, without blanks,
// repeats or the local region. It is nil when none remain, so that a
// client without remote regions behaves as one that never had the
// setting.
func remoteRegions(list []string, local string) []string {
	var out []string
	for _, entry := range list {
		for r := range strings.SplitSeq(entry, ",") {
			if r = normRegion(r); r != "" && r != local && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}

// regionsQuery is the regions parameter of every fetch, or "" without
// remote regions. Java's server keys its response cache by the sorted,
// lower-cased list, which is what FetchRemoteRegions holds.
func regionsQuery(remote []string) string {
	if len(remote) == 0 {
		return ""
	}
	return "regions=" + url.QueryEscape(strings.Join(remote, ","))
}

// withQuery appends the parameters that are not "" to path.
func withQuery(path string, params ...string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	for _, p := range params {
		if p != "" {
			path += sep + p
			sep = "&"
		}
	}
	return path
}

// placement places fetched instances in regions. A nil placement (no
// remote regions) places every instance in the local region.
type placement struct {
	remote []string          // FetchRemoteRegions
	zones  map[string]string // zone -> remote region, "" for a local zone
}

// newPlacement returns the placement of cfg (after withDefaults), or nil
// without remote regions.
func newPlacement(cfg Config) *placement {
	if len(cfg.FetchRemoteRegions) == 0 {
		return nil
	}
	p := &placement{remote: cfg.FetchRemoteRegions, zones: map[string]string{}}
	byRegion := map[string][]string{}
	for r, zones := range cfg.AvailabilityZones {
		r = normRegion(r)
		byRegion[r] = append(byRegion[r], zones...)
	}
	// The remote regions first, in order, so that a zone listed twice is
	// placed the same way at every start; the local region's zones only
	// keep their names from being read as a remote region's.
	for _, r := range append(slices.Clone(p.remote), cfg.Region) {
		name := r
		if r == cfg.Region {
			name = ""
		}
		for _, entry := range byRegion[r] {
			for z := range strings.SplitSeq(entry, ",") {
				if z = strings.TrimSpace(z); z != "" {
					if _, taken := p.zones[z]; !taken {
						p.zones[z] = name
					}
				}
			}
		}
	}
	return p
}

// region returns the remote region i is in, or "" for the local region.
func (p *placement) region(i *eureka.InstanceInfo) string {
	if p == nil {
		return ""
	}
	zone := i.Zone()
	if zone == "" {
		return ""
	}
	if r, ok := p.zones[zone]; ok {
		return r
	}
	_, size := utf8.DecodeLastRuneInString(zone)
	if r := normRegion(zone[:len(zone)-size]); slices.Contains(p.remote, r) {
		return r
	}
	return ""
}
