package discovery

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
)

// zoned is inApp with the instance placed in a zone, as a Java server
// writes it: amazonAZ, when set, as an AmazonInfo's availability-zone;
// metaZone, when set, as the metadata "zone" Spring instances register.
func zoned(app, host, status, action, amazonAZ, metaZone string) [2]string {
	js := netflixInstance(app, host, status, action)
	if amazonAZ != "" {
		js = strings.Replace(js, `{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}`,
			fmt.Sprintf(`{"@class":"com.netflix.appinfo.AmazonInfo","name":"Amazon","metadata":{"availability-zone":%q}}`, amazonAZ), 1)
	}
	if metaZone != "" {
		js = strings.Replace(js, `"metadata":{"@class":"java.util.Collections$EmptyMap"}`,
			fmt.Sprintf(`"metadata":{"zone":%q}`, metaZone), 1)
	}
	return [2]string{app, js}
}

func newRegionClient(t *testing.T, f *fakeEureka, cfg Config) *Client {
	t.Helper()
	cfg.ServiceURLs = []string{f.url()}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mustWatch runs one watch, as the fetch loop does when the server offers
// it.
func mustWatch(t *testing.T, c *Client) {
	t.Helper()
	c.fetchMu.Lock()
	defer c.fetchMu.Unlock()
	if !c.watchable() {
		t.Fatal("the client would not watch")
	}
	if err := c.watchOnce(); err != nil {
		t.Fatal(err)
	}
}

// takeURIs returns the requests the fake server got since the last call.
func (f *fakeEureka) takeURIs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.uris
	f.uris = nil
	return out
}

// Full fetches, deltas and watches all carry the remote regions, sorted,
// lower-cased, without repeats or the local region, after the other
// parameters; the watch passes back the server's version as it was sent.
func TestRemoteRegionsParameterOnEveryFetch(t *testing.T) {
	const regions = "regions=eu-west-1%2Cus-west-2"
	f := newFakeEureka(t)
	f.full = netflixApps("1", "UP_1_", inApp("ORDERS", "h1", "UP", "ADDED"))
	f.headers = map[string]string{headerWatch: "1", headerVersion: "l=1;r=4"}
	remote := []string{"US-West-2", "eu-west-1, us-west-2", "us-east-1", " "}

	c := newRegionClient(t, f, Config{FetchRemoteRegions: remote})
	mustRefresh(t, c) // full: the cache is empty
	f.set(func(f *fakeEureka) {
		f.deltas = []string{netflixApps("2", "UP_1_", nil...), netflixApps("3", "UP_1_", nil...)}
		f.headers[headerVersion] = "l=2;r=4"
	})
	mustRefresh(t, c) // delta
	mustWatch(t, c)
	want := []string{
		"/eureka/apps/?" + regions,
		"/eureka/apps/delta?" + regions,
		"/eureka/apps/delta?watch=l%3D2%3Br%3D4&wait=30&" + regions,
	}
	if got := f.takeURIs(); !slices.Equal(got, want) {
		t.Errorf("requests:\n got %q\nwant %q", got, want)
	}
	if got := c.Regions(); !slices.Equal(got, []string{"us-east-1", "eu-west-1", "us-west-2"}) {
		t.Errorf("Regions() = %q", got)
	}

	// With an interest, next to the apps parameter.
	f.set(func(f *fakeEureka) { f.deltas = []string{netflixApps("4", "UP_1_", nil...)} })
	named := newRegionClient(t, f, Config{FetchRemoteRegions: remote, Apps: []string{"orders"}})
	mustRefresh(t, named)
	mustWatch(t, named)
	want = []string{
		"/eureka/apps/?apps=ORDERS&" + regions,
		"/eureka/apps/delta?watch=l%3D2%3Br%3D4&wait=30&apps=ORDERS&" + regions,
	}
	if got := f.takeURIs(); !slices.Equal(got, want) {
		t.Errorf("requests with an interest:\n got %q\nwant %q", got, want)
	}
}

// Without remote regions (none set, or only the local one) the requests
// and the document are those of a client without the setting, whatever
// Region and AvailabilityZones say.
func TestNoRemoteRegionsRequestsUnchanged(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Region: "eu-west-1", AvailabilityZones: map[string][]string{"eu-west-1": {"eu-west-1a"}, "us-west-2": {"zone2"}}},
		{FetchRemoteRegions: []string{"US-EAST-1"}},
	} {
		f := newFakeEureka(t)
		f.full = netflixApps("1", "SERVERS_HASH_", zoned("ORDERS", "h1", "UP", "ADDED", "us-west-2a", "zone2"))
		f.headers = map[string]string{headerWatch: "1", headerVersion: "v1"}
		f.deltas = []string{netflixApps("2", "UP_1_", nil...), netflixApps("3", "UP_1_", nil...)}
		c := newRegionClient(t, f, cfg)
		mustRefresh(t, c)
		if doc := c.Applications(); doc.AppsHashcode != "SERVERS_HASH_" {
			t.Errorf("%+v: document hash %q, want the server's", cfg, doc.AppsHashcode)
		}
		mustRefresh(t, c)
		mustWatch(t, c)
		want := []string{"/eureka/apps/", "/eureka/apps/delta", "/eureka/apps/delta?watch=v1&wait=30"}
		if got := f.takeURIs(); !slices.Equal(got, want) {
			t.Errorf("%+v: requests %q, want %q", cfg, got, want)
		}
		if got := ids(c.Instances("ORDERS")); got != "h1=UP" {
			t.Errorf("%+v: a zoned instance is not local without remote regions: %q", cfg, got)
		}
		if got := c.Regions(); len(got) != 1 {
			t.Errorf("%+v: Regions() = %q", cfg, got)
		}
	}
}

// Each fetched instance goes to its region: by Amazon's availability
// zone, else its metadata zone; by AvailabilityZones, else by the zone's
// name minus its last letter; else to the local region. The reads answer
// the local region, InstancesIn any, and the hash check covers them all.
func TestRegionPlacement(t *testing.T) {
	f := newFakeEureka(t)
	f.full = netflixApps("1", "DOWN_1_UP_12_",
		zoned("ORDERS", "l1", "UP", "ADDED", "", ""),                  // no zone
		zoned("ORDERS", "l2", "UP", "ADDED", "", "us-east-1a"),        // the local region's, by name
		zoned("ORDERS", "l3", "UP", "ADDED", "", "zone-x"),            // unknown
		zoned("ORDERS", "l4", "UP", "ADDED", "", "ap-south-1a"),       // a region not fetched
		zoned("ORDERS", "l5", "UP", "ADDED", "", "zone-ap"),           // listed under a region not fetched
		zoned("ORDERS", "l6", "UP", "ADDED", "", "eu-west-1z"),        // listed under the local region
		zoned("ORDERS", "e1", "UP", "ADDED", "eu-west-1b", ""),        // Amazon, by name
		zoned("ORDERS", "e2", "UP", "ADDED", "", "zone-eu"),           // metadata, by AvailabilityZones
		zoned("ORDERS", "e3", "UP", "ADDED", "", "zone-eu2"),          // the second of a comma-separated entry
		zoned("ORDERS", "e4", "DOWN", "ADDED", "", "zone-eu"),         // not UP
		zoned("ORDERS", "w1", "UP", "ADDED", "us-west-2a", "zone-eu"), // Amazon's zone over the metadata's
		zoned("ORDERS", "w2", "UP", "ADDED", "", "us-west-2c"),        // metadata, by name
		zoned("BILLING", "b1", "UP", "ADDED", "us-west-2b", ""),       // an app only a remote region has
	)
	c := newRegionClient(t, f, Config{
		FetchRemoteRegions: []string{"eu-west-1", "us-west-2"},
		AvailabilityZones: map[string][]string{
			"EU-West-1": {"zone-eu, zone-eu2"}, "us-east-1": {"eu-west-1z"}, "ap-south-1": {"zone-ap"},
		},
	})
	mustRefresh(t, c)

	const local = "l1=UP,l2=UP,l3=UP,l4=UP,l5=UP,l6=UP"
	for _, tc := range []struct{ app, region, want string }{
		{"ORDERS", "", local},
		{"ORDERS", "us-east-1", local},
		{"ORDERS", "US-EAST-1", local},
		{"ORDERS", "eu-west-1", "e1=UP,e2=UP,e3=UP"},
		{"ORDERS", "EU-West-1", "e1=UP,e2=UP,e3=UP"},
		{"ORDERS", "us-west-2", "w1=UP,w2=UP"},
		{"BILLING", "us-west-2", "b1=UP"},
		{"BILLING", "", ""},
		{"ORDERS", "ap-south-1", ""},
	} {
		if got := ids(c.InstancesIn(tc.app, tc.region)); got != tc.want {
			t.Errorf("InstancesIn(%q, %q) = %q, want %q", tc.app, tc.region, got, tc.want)
		}
	}
	if got := ids(c.Instances("ORDERS")); got != local {
		t.Errorf("Instances(ORDERS) = %q, want the local region's", got)
	}
	if got := ids(c.AllInstances("ORDERS")); got != local {
		t.Errorf("AllInstances(ORDERS) = %q, want the local region's", got)
	}
	if c.Instances("BILLING") != nil || c.AllInstances("BILLING") != nil {
		t.Error("a remote region's app is read as local")
	}
	doc := c.Applications()
	if len(doc.Applications) != 1 || doc.Applications[0].Name != "ORDERS" || doc.AppsHashcode != "UP_6_" {
		t.Errorf("Applications(): %d apps, hash %q; want ORDERS alone, hashed alone", len(doc.Applications), doc.AppsHashcode)
	}

	// The server's hash covers every region: a delta that changes nothing
	// matches, with no full fetch.
	f.set(func(f *fakeEureka) { f.deltas = []string{netflixApps("2", "DOWN_1_UP_12_", nil...)} })
	mustRefresh(t, c)
	if full, delta := f.calls(); full != 1 || delta != 1 {
		t.Errorf("calls: full %d delta %d; the remote instances are not in the hash check", full, delta)
	}
}

// The placement rule on its own, including the edges a fetch does not
// reach easily.
func TestPlacementRule(t *testing.T) {
	cfg := Config{Region: "us-east-1", FetchRemoteRegions: []string{"eu-west-1"},
		AvailabilityZones: map[string][]string{"eu-west-1": {"z1"}, "us-east-1": {"z1", "eu-west-1c"}}}.withDefaults()
	p := newPlacement(cfg)
	amazon := func(az string) *eureka.InstanceInfo {
		return &eureka.InstanceInfo{DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterAmazon,
			Metadata: map[string]string{"availability-zone": az}}, Metadata: map[string]string{"zone": "z1"}}
	}
	meta := func(zone string) *eureka.InstanceInfo {
		return &eureka.InstanceInfo{DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
			Metadata: map[string]string{"zone": zone}}
	}
	for _, tc := range []struct {
		name string
		i    *eureka.InstanceInfo
		want string
	}{
		{"no zone", &eureka.InstanceInfo{}, ""},
		{"empty metadata zone", meta(""), ""},
		{"one letter", meta("a"), ""},
		{"strip the last letter", meta("eu-west-1x"), "eu-west-1"},
		{"strip, any case", meta("EU-WEST-1A"), "eu-west-1"},
		{"a zone of two regions is the remote one's", meta("z1"), "eu-west-1"},
		{"the local region's list over the name", meta("eu-west-1c"), ""},
		{"Amazon's zone first", amazon("eu-west-1a"), "eu-west-1"},
		{"Amazon without a zone: the metadata's", amazon(""), "eu-west-1"},
		{"a MyOwn data center's availability-zone is no zone", &eureka.InstanceInfo{DataCenterInfo: eureka.DataCenterInfo{
			Name: eureka.DataCenterMyOwn, Metadata: map[string]string{"availability-zone": "eu-west-1a"}}}, ""},
	} {
		if got := p.region(tc.i); got != tc.want {
			t.Errorf("%s: region %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := (*placement)(nil).region(meta("eu-west-1a")); got != "" {
		t.Errorf("without remote regions: %q", got)
	}
}

// Deltas change remote regions as they change the local one, rebuilding
// only the apps they touch; an instance that moved to another region makes
// a full fetch, through the hash.
func TestRemoteRegionDeltas(t *testing.T) {
	f := newFakeEureka(t)
	f.full = netflixApps("1", "UP_4_",
		zoned("ORDERS", "l1", "UP", "ADDED", "", ""), zoned("BILLING", "b1", "UP", "ADDED", "", ""),
		zoned("ORDERS", "e1", "UP", "ADDED", "", "eu-west-1a"), zoned("ORDERS", "e2", "UP", "ADDED", "", "eu-west-1b"))
	c := newRegionClient(t, f, Config{FetchRemoteRegions: []string{"eu-west-1", "us-west-2"}})
	mustRefresh(t, c)
	changes := c.Changed()
	before := c.snap.Load()

	// A remote instance goes DOWN, another is added in a second region.
	f.set(func(f *fakeEureka) {
		f.deltas = []string{netflixApps("2", "DOWN_1_UP_4_",
			zoned("ORDERS", "e1", "DOWN", "MODIFIED", "", "eu-west-1a"),
			zoned("ORDERS", "w1", "UP", "ADDED", "us-west-2a", ""))}
	})
	mustRefresh(t, c)
	if got := ids(c.InstancesIn("ORDERS", "eu-west-1")); got != "e2=UP" {
		t.Errorf("eu-west-1 after e1 went DOWN: %q", got)
	}
	if got := ids(c.InstancesIn("ORDERS", "us-west-2")); got != "w1=UP" {
		t.Errorf("us-west-2 after w1 was added: %q", got)
	}
	if got := ids(c.Instances("ORDERS")); got != "l1=UP" {
		t.Errorf("local after a remote delta: %q", got)
	}
	after := c.snap.Load()
	if after.apps["ORDERS"] != before.apps["ORDERS"] || after.apps["BILLING"] != before.apps["BILLING"] {
		t.Error("a remote delta rebuilt local apps")
	}
	select {
	case <-changes:
	default:
		t.Error("a remote change was not announced")
	}

	// A remote instance is removed.
	f.set(func(f *fakeEureka) {
		f.deltas = []string{netflixApps("3", "UP_4_", zoned("ORDERS", "e1", "DOWN", "DELETED", "", "eu-west-1a"))}
	})
	mustRefresh(t, c)
	if got := ids(c.snap.Load().remote["eu-west-1"]["ORDERS"].all); got != "e2=UP" {
		t.Errorf("eu-west-1, every status, after e1 was deleted: %q", got)
	}
	if c.snap.Load().remote["us-west-2"]["ORDERS"] != after.remote["us-west-2"]["ORDERS"] {
		t.Error("a delta of eu-west-1 rebuilt us-west-2")
	}

	// e2 moves to us-west-2 (its zone changed): held in both regions, the
	// client counts it twice and reconciles with a full fetch.
	f.set(func(f *fakeEureka) {
		f.full = netflixApps("1", "UP_4_",
			zoned("ORDERS", "l1", "UP", "ADDED", "", ""), zoned("BILLING", "b1", "UP", "ADDED", "", ""),
			zoned("ORDERS", "w1", "UP", "ADDED", "us-west-2a", ""), zoned("ORDERS", "e2", "UP", "ADDED", "", "us-west-2b"))
		f.deltas = []string{netflixApps("4", "UP_4_", zoned("ORDERS", "e2", "UP", "MODIFIED", "", "us-west-2b"))}
	})
	mustRefresh(t, c)
	if full, _ := f.calls(); full != 2 {
		t.Errorf("full fetches after a move: %d, want a reconcile", full)
	}
	if got := c.InstancesIn("ORDERS", "eu-west-1"); got != nil {
		t.Errorf("eu-west-1 after the move: %q", ids(got))
	}
	if got := ids(c.InstancesIn("ORDERS", "us-west-2")); got != "e2=UP,w1=UP" {
		t.Errorf("us-west-2 after the move: %q", got)
	}
	if v := c.Applications().VersionsDelta; v != 4 {
		t.Errorf("version after the reconcile %d, want the delta's 4", v)
	}

	// A local delta leaves the remote regions' apps as they were.
	moved := c.snap.Load()
	f.set(func(f *fakeEureka) {
		f.deltas = []string{netflixApps("5", "UP_3_", zoned("BILLING", "b1", "UP", "DELETED", "", ""))}
	})
	mustRefresh(t, c)
	s := c.snap.Load()
	if s.remote["us-west-2"]["ORDERS"] != moved.remote["us-west-2"]["ORDERS"] || s.apps["ORDERS"] != moved.apps["ORDERS"] {
		t.Error("a delta of BILLING rebuilt another app")
	}
	if s.apps["BILLING"] != nil {
		t.Error("the deleted app is kept")
	}
	if full, _ := f.calls(); full != 2 {
		t.Errorf("full fetches: %d after consistent deltas", full)
	}
}

// A delta that misses a remote region's change does not match the
// server's hash, and the full fetch that follows (with the regions) brings
// the change in.
func TestRemoteRegionHashMismatchFetchesInFull(t *testing.T) {
	f := newFakeEureka(t)
	f.full = netflixApps("1", "UP_2_", zoned("ORDERS", "l1", "UP", "ADDED", "", ""),
		zoned("ORDERS", "e1", "UP", "ADDED", "eu-west-1a", ""))
	c := newRegionClient(t, f, Config{FetchRemoteRegions: []string{"eu-west-1"}})
	mustRefresh(t, c)
	f.set(func(f *fakeEureka) {
		f.full = netflixApps("1", "UP_3_", zoned("ORDERS", "l1", "UP", "ADDED", "", ""),
			zoned("ORDERS", "e1", "UP", "ADDED", "eu-west-1a", ""), zoned("ORDERS", "e2", "UP", "ADDED", "eu-west-1b", ""))
		f.deltas = []string{netflixApps("2", "UP_3_", nil...)}
	})
	f.takeURIs()
	mustRefresh(t, c)
	want := []string{"/eureka/apps/delta?regions=eu-west-1", "/eureka/apps/?regions=eu-west-1"}
	if got := f.takeURIs(); !slices.Equal(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
	if got := ids(c.InstancesIn("ORDERS", "eu-west-1")); got != "e1=UP,e2=UP" {
		t.Errorf("eu-west-1 after the reconcile: %q", got)
	}
	if got := ids(c.Instances("ORDERS")); got != "l1=UP" {
		t.Errorf("local after the reconcile: %q", got)
	}
}
