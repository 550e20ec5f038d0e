package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/routing"
)

// Routes exports a gateway's request counts (routing.Counts) as
// <namespace>_gateway_requests_total{app, subset}: the requests routed to
// each app, by the subset of its instances the traffic rules gave them
// (subset="" for those that could go to any instance). Read at scrape
// time.
type Routes struct {
	counts *routing.Counts
	desc   *prometheus.Desc
}

// NewRoutes returns the collector of counts, with the metric's name
// prefixed by namespace.
func NewRoutes(counts *routing.Counts, namespace string) *Routes {
	return &Routes{counts: counts, desc: prometheus.NewDesc(prometheus.BuildFQName(namespace, "gateway", "requests_total"),
		"Requests the gateway routed, by application and by the subset of its instances the traffic rules chose (\"\": any instance).", []string{"app", "subset"}, nil)}
}

// Describe sends the metric's description.
func (m *Routes) Describe(ch chan<- *prometheus.Desc) { ch <- m.desc }

// Collect sends the counts.
func (m *Routes) Collect(ch chan<- prometheus.Metric) {
	m.counts.Each(func(app, subset string, n uint64) {
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.CounterValue, float64(n), app, subset)
	})
}
