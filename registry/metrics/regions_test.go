package metrics_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/promtext"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/metrics"
	"github.com/eurekagate/eurekagate/registry/regions"
)

var regionFamilies = []string{
	"eureka_remote_region_ready", "eureka_remote_region_dropped", "eureka_remote_region_apps",
	"eureka_remote_region_instances", "eureka_remote_region_last_sync_age_seconds",
	"eureka_remote_region_syncs_total", "eureka_remote_region_failures_total",
}

const regionsHead = `
# HELP eureka_remote_region_ready 1 once a remote region's registry has been read, so that reads asking for it are served.
# TYPE eureka_remote_region_ready gauge
# HELP eureka_remote_region_dropped 1 when a remote region stopped answering for longer than the retention and its instances were dropped.
# TYPE eureka_remote_region_dropped gauge
# HELP eureka_remote_region_apps Applications held of a remote region.
# TYPE eureka_remote_region_apps gauge
# HELP eureka_remote_region_instances Instances held of a remote region (never counted in instances).
# TYPE eureka_remote_region_instances gauge
# HELP eureka_remote_region_last_sync_age_seconds Seconds since a remote region's registry was last read successfully.
# TYPE eureka_remote_region_last_sync_age_seconds gauge
# HELP eureka_remote_region_syncs_total Successful reads of a remote region's registry.
# TYPE eureka_remote_region_syncs_total counter
# HELP eureka_remote_region_failures_total Failed reads of a remote region's registry.
# TYPE eureka_remote_region_failures_total counter
`

// The remote regions' metrics: names, help, types, one series per region,
// read from the Store at each scrape (the age of the last sync by the
// Store's clock, absent before the first), and the remote instances never
// in eureka_instances. The registry is pedantic: it checks what is
// collected against what is described.
func TestRemoteRegionMetrics(t *testing.T) {
	clock := testkit.NewFakeClock()
	s := registry.New(registry.Config{Clock: clock, DisableSelfPreservation: true, RemoteRegionRetention: time.Minute,
		RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}, {Name: "ap-south"}}})
	testkit.MustRegister(t, s, testkit.Inst("ORDERS", "local-1"), false)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.New(s, nil, "eureka"))

	// Before any read: both not ready, no age (nor its family).
	noAge := strings.NewReplacer("# HELP eureka_remote_region_last_sync_age_seconds Seconds since a remote region's registry was last read successfully.\n", "",
		"# TYPE eureka_remote_region_last_sync_age_seconds gauge\n", "").Replace(regionsHead)
	promtext.CompareLines(t, promtext.Exposition(t, reg, regionFamilies...), promtext.SortedLines(noAge+`
eureka_remote_region_ready{region="eu-west"} 0
eureka_remote_region_ready{region="ap-south"} 0
eureka_remote_region_dropped{region="eu-west"} 0
eureka_remote_region_dropped{region="ap-south"} 0
eureka_remote_region_apps{region="eu-west"} 0
eureka_remote_region_apps{region="ap-south"} 0
eureka_remote_region_instances{region="eu-west"} 0
eureka_remote_region_instances{region="ap-south"} 0
eureka_remote_region_syncs_total{region="eu-west"} 0
eureka_remote_region_syncs_total{region="ap-south"} 0
eureka_remote_region_failures_total{region="eu-west"} 0
eureka_remote_region_failures_total{region="ap-south"} 0
`))

	doc := &eureka.Applications{Applications: []*eureka.Application{
		{Name: "ORDERS", Instances: []*eureka.InstanceInfo{testkit.Inst("ORDERS", "eu-1"), testkit.Inst("ORDERS", "eu-2")}},
		{Name: "BILLING", Instances: []*eureka.InstanceInfo{testkit.Inst("BILLING", "eu-3")}},
	}}
	if err := regions.MirrorOf(s).Update("eu-west", doc, clock.Now()); err != nil {
		t.Fatal(err)
	}
	clock.Advance(20 * time.Second)
	if err := regions.MirrorOf(s).Update("eu-west", doc, clock.Now()); err != nil {
		t.Fatal(err)
	}
	clock.Advance(25 * time.Second)
	regions.MirrorOf(s).Failed("eu-west", clock.Now(), errors.New("connection refused"))
	regions.MirrorOf(s).Failed("ap-south", clock.Now(), errors.New("timeout"))
	regions.MirrorOf(s).Failed("ap-south", clock.Now(), errors.New("timeout"))
	promtext.CompareLines(t, promtext.Exposition(t, reg, regionFamilies...), promtext.SortedLines(regionsHead+`
eureka_remote_region_ready{region="eu-west"} 1
eureka_remote_region_ready{region="ap-south"} 0
eureka_remote_region_dropped{region="eu-west"} 0
eureka_remote_region_dropped{region="ap-south"} 0
eureka_remote_region_apps{region="eu-west"} 2
eureka_remote_region_apps{region="ap-south"} 0
eureka_remote_region_instances{region="eu-west"} 3
eureka_remote_region_instances{region="ap-south"} 0
eureka_remote_region_last_sync_age_seconds{region="eu-west"} 25
eureka_remote_region_syncs_total{region="eu-west"} 2
eureka_remote_region_syncs_total{region="ap-south"} 0
eureka_remote_region_failures_total{region="eu-west"} 1
eureka_remote_region_failures_total{region="ap-south"} 2
`))
	// Local counts stay local.
	promtext.CompareLines(t, promtext.Exposition(t, reg, "eureka_instances"), promtext.SortedLines(`
# HELP eureka_instances Registered instances by application and status.
# TYPE eureka_instances gauge
eureka_instances{app="ORDERS",status="UP"} 1
`))

	// Past the retention the region is dropped; its age keeps growing.
	clock.Advance(time.Minute)
	regions.MirrorOf(s).DropStale()
	got := strings.Join(promtext.Exposition(t, reg, regionFamilies...), "\n")
	for _, want := range []string{
		`eureka_remote_region_dropped{region="eu-west"} 1`,
		`eureka_remote_region_ready{region="eu-west"} 1`,
		`eureka_remote_region_instances{region="eu-west"} 0`,
		`eureka_remote_region_apps{region="eu-west"} 0`,
		`eureka_remote_region_last_sync_age_seconds{region="eu-west"} 85`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("after the retention, no %s in\n%s", want, got)
		}
	}
}

// Without remote regions, no remote_region series at all; the namespace
// prefixes them as the other metrics.
func TestRemoteRegionMetricsAbsentAndNamespaced(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.New(registry.New(registry.Config{}), nil, "eureka"))
	for _, l := range promtext.Exposition(t, reg) {
		if strings.Contains(l, "remote_region") {
			t.Errorf("without remote regions: %s", l)
		}
	}

	s := registry.New(registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}}})
	reg = prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.New(s, nil, "caddy_eureka"))
	if got := promtext.Exposition(t, reg, "caddy_eureka_remote_region_ready"); len(got) != 3 || got[2] != `caddy_eureka_remote_region_ready{region="eu-west"} 0` {
		t.Errorf("caddy_eureka_remote_region_ready: %q", got)
	}
}
