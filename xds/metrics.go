package xds

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/traffic/metrics"
)

// Collector exports a server's Stats, read at scrape time (prefix
// <namespace>_xds_):
//
//   - clients: the xDS streams open now;
//   - resources_sent_total{type}: resources sent, type listener, cluster,
//     endpoints or route;
//   - push_latency_seconds: a histogram of the time from an app's change
//     in the registry to the send of its endpoints to a client watching
//     them, buckets from 1 ms to 10 s;
//   - rules_refused{app}: 1 for each app whose traffic rules are refused
//     for xDS (Server.RulesRefused says why).
type Collector struct {
	stats                           func() Stats
	refused                         func() map[string]string
	clients, sent, latency, rulesNo *prometheus.Desc
}

// Collector returns the collector of s's Stats.
func (s *Server) Collector(namespace string) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "xds", name), help, labels, nil)
	}
	return &Collector{
		stats:   s.Stats,
		refused: s.RulesRefused,
		rulesNo: d("rules_refused", "Apps whose traffic rules are not served over xDS (1 each).", "app"),
		clients: d("clients", "xDS streams open now."),
		sent:    d("resources_sent_total", "Resources sent over xDS, by type.", "type"),
		latency: d("push_latency_seconds", "Time from an app's change in the registry to the send of its endpoints to a client watching them."),
	}
}

// Describe sends the descriptors.
func (x *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- x.clients
	ch <- x.sent
	ch <- x.latency
	ch <- x.rulesNo
}

// Collect reads the server's stats.
func (x *Collector) Collect(ch chan<- prometheus.Metric) {
	st := x.stats()
	ch <- prometheus.MustNewConstMetric(x.clients, prometheus.GaugeValue, float64(st.Clients))
	for typ, n := range st.ResourcesSent {
		ch <- prometheus.MustNewConstMetric(x.sent, prometheus.CounterValue, float64(n), typ)
	}
	buckets, count := metrics.LatencyBuckets(st.PushLatency[:])
	ch <- prometheus.MustNewConstHistogram(x.latency, count, st.PushLatencySum.Seconds(), buckets)
	for app := range x.refused() {
		ch <- prometheus.MustNewConstMetric(x.rulesNo, prometheus.GaugeValue, 1, app)
	}
}
