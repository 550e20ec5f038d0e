package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/registry"
	remote "github.com/eurekagate/eurekagate/registry/regions"
)

// regions exports a Store's remote regions (registry/regions.State), read at
// scrape time, counted apart from the local registry (whose instances
// metric never includes them), one series per region (label region):
//
//   - remote_region_ready: 1 once its registry has been read (reads that
//     ask for it are served from then on, regions.State.Ready);
//   - remote_region_dropped: 1 after it stopped answering for longer than
//     the retention and its instances were dropped;
//   - remote_region_apps, remote_region_instances: what this node holds
//     of it;
//   - remote_region_last_sync_age_seconds: the time since its last
//     successful read, by the Store's clock; absent before the first;
//   - remote_region_syncs_total, remote_region_failures_total: its reads
//     that succeeded and failed.
//
// A Store without remote regions has none of them.
type regions struct {
	store                                        *registry.Store
	mirror                                       *remote.Mirror
	ready, dropped, apps, instances, lastSyncAge *prometheus.Desc
	syncs, failures                              *prometheus.Desc
}

func newRegions(store *registry.Store, namespace string) *regions {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, []string{"region"}, nil)
	}
	return &regions{
		store:       store,
		mirror:      remote.MirrorOf(store),
		ready:       d("remote_region_ready", "1 once a remote region's registry has been read, so that reads asking for it are served."),
		dropped:     d("remote_region_dropped", "1 when a remote region stopped answering for longer than the retention and its instances were dropped."),
		apps:        d("remote_region_apps", "Applications held of a remote region."),
		instances:   d("remote_region_instances", "Instances held of a remote region (never counted in instances)."),
		lastSyncAge: d("remote_region_last_sync_age_seconds", "Seconds since a remote region's registry was last read successfully."),
		syncs:       d("remote_region_syncs_total", "Successful reads of a remote region's registry."),
		failures:    d("remote_region_failures_total", "Failed reads of a remote region's registry."),
	}
}

func (r *regions) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{r.ready, r.dropped, r.apps, r.instances, r.lastSyncAge, r.syncs, r.failures} {
		ch <- d
	}
}

func (r *regions) Collect(ch chan<- prometheus.Metric) {
	states := r.mirror.States()
	if len(states) == 0 {
		return
	}
	now := r.store.Config().Clock.Now()
	gauge := func(d *prometheus.Desc, v float64, region string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, region)
	}
	counter := func(d *prometheus.Desc, v uint64, region string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), region)
	}
	flag := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	for _, st := range states {
		gauge(r.ready, flag(st.Ready), st.Name)
		gauge(r.dropped, flag(st.Dropped), st.Name)
		gauge(r.apps, float64(st.Apps), st.Name)
		gauge(r.instances, float64(st.Instances), st.Name)
		if !st.LastSync.IsZero() {
			gauge(r.lastSyncAge, max(0, now.Sub(st.LastSync).Seconds()), st.Name)
		}
		counter(r.syncs, st.Syncs, st.Name)
		counter(r.failures, st.Failures, st.Name)
	}
}
