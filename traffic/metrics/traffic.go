// Package metrics exports the gateways' traffic (a traffic.Recorder, with
// their balancers' ejections and health-check failures) as Prometheus
// metrics, read at scrape time, so that nothing is computed on a
// request's path. It is apart from traffic so that the counters need no
// Prometheus import, and from registry/metrics, which exports the
// registry's own state.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/traffic"
)

// Traffic exports a gateway's traffic (a traffic.Recorder), read at scrape
// time, with the same names in both gateways (prefix
// <namespace>_gateway_):
//
//   - requests_total{app, subset, method, code}: requests served, by the
//     subset the traffic rules chose ("" for any instance), method and
//     status class ("2xx");
//   - request_duration_seconds{app}: a histogram of their durations,
//     buckets from 1 ms to 10 s;
//   - upstream_failures_total{app, kind}: attempts that failed at an
//     instance, kind refused, reset or timeout;
//   - retries_total{app}: attempts sent again to another instance;
//   - requests_limited_total{app}: requests answered 429 by a rate limit
//     of the traffic rules (routing.Router.Limit);
//   - region_requests_total{app, region}: requests served by another
//     region's instances (routing.Config.FailoverRegions) because the
//     local region had none that could take them;
//   - ejections_total{app}: instances skipped after failures (passive
//     health), and health_check_failures_total{app}: failed active health
//     checks, with a balancer;
//   - requests_in_flight{app}, instance_requests_in_flight{app,
//     instance, region} (region empty for the local region's instances:
//     ids repeat across regions) and, where the gateway keeps its own
//     pools (the fasthttp gateway), instance_connections{app, address}
//     (the instance's host:port);
//   - access_log_dropped_total, with AccessLogDropped;
//   - the circuit breakers' and retry budgets' (breaker.go).
//
// app is a registry's application name, or "unknown" for requests that
// name none, so that clients cannot grow the label set. The series of an
// application or an instance that leaves the registry go with its
// counters, traffic.Grace after (traffic.Recorder.Sweep, which the
// gateways run), and so do the application's ejections and health check
// failures: the series are bounded by what is registered.
type Traffic struct {
	// AccessLogDropped, when set, is a gateway's
	// Gateway.AccessLogDropped: access log lines dropped.
	AccessLogDropped func() uint64

	rec    *traffic.Recorder
	health Health

	requests, duration, failures, retries, limited, ejections, healthFailures *prometheus.Desc
	regionRequests                                                            *prometheus.Desc
	inFlight, instanceInFlight, connections, accessLogDropped                 *prometheus.Desc
	breakers                                                                  breakerDescs // breaker.go
}

// Health reports, per app, the ejections of its instances (passive
// health) and their failed active health checks, cumulative.
type Health func() (ejections, checkFailures map[string]uint64)

// BalancerHealth is the Health of a balancer and its Checker, if any.
func BalancerHealth(b *balancer.Balancer) Health {
	return func() (map[string]uint64, map[string]uint64) {
		var failures map[string]uint64
		if c := b.Checker(); c != nil {
			failures = c.Failures()
		}
		return b.Ejections(), failures
	}
}

// NewTraffic returns the collector of rec and, if not nil, of health,
// with names prefixed by namespace ("eureka", "caddy_eureka").
func NewTraffic(rec *traffic.Recorder, health Health, namespace string) *Traffic {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "gateway", name), help, labels, nil)
	}
	return &Traffic{
		rec:              rec,
		health:           health,
		requests:         d("requests_total", "Requests the gateway served, by application, subset of its instances (\"\": any), method and status class.", "app", "subset", "method", "code"),
		duration:         d("request_duration_seconds", "How long the gateway's requests took, by application.", "app"),
		failures:         d("upstream_failures_total", "Attempts that failed at an instance, by application and kind (refused, reset, timeout).", "app", "kind"),
		retries:          d("retries_total", "Attempts sent again to another instance, by application.", "app"),
		limited:          d("requests_limited_total", "Requests answered 429 by a rate limit of the traffic rules, by application.", "app"),
		regionRequests:   d("region_requests_total", "Requests served by another region's instances because the local region had none that could take them, by application and region.", "app", "region"),
		ejections:        d("ejections_total", "Instances taken out of rotation after failures (passive health), by application.", "app"),
		healthFailures:   d("health_check_failures_total", "Failed active health checks, by application.", "app"),
		inFlight:         d("requests_in_flight", "Requests being served, by application.", "app"),
		instanceInFlight: d("instance_requests_in_flight", "Requests being served by each instance, by application, instance id and region (empty: the local region).", "app", "instance", "region"),
		connections:      d("instance_connections", "Connections the gateway holds to each instance, by its address.", "app", "address"),
		accessLogDropped: d("access_log_dropped_total", "Access log lines the gateway dropped: its writer was behind (the queue full) or a write failed."),
		breakers:         newBreakerDescs(d),
	}
}

// Describe sends the metrics' descriptions.
func (m *Traffic) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.requests, m.duration, m.failures, m.retries, m.limited, m.regionRequests, m.ejections, m.healthFailures,
		m.inFlight, m.instanceInFlight, m.connections, m.accessLogDropped} {
		ch <- d
	}
	m.breakers.describe(ch)
}

// Collect sends the metrics.
func (m *Traffic) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	m.rec.Each(func(app string, a *traffic.App) {
		s := a.Snapshot()
		for subset, n := range s.Requests {
			for mi := range n {
				for ci, v := range n[mi] {
					if v > 0 {
						counter(m.requests, v, app, subset, traffic.Methods[mi], traffic.Classes[ci])
					}
				}
			}
		}
		buckets, count := LatencyBuckets(s.Latency[:])
		ch <- prometheus.MustNewConstHistogram(m.duration, count, s.Sum.Seconds(), buckets, app)
		for k, v := range s.Failures {
			counter(m.failures, v, app, traffic.Failures[k])
		}
		counter(m.retries, s.Retries, app)
		counter(m.limited, s.Limited, app)
		for region, v := range s.Regions {
			counter(m.regionRequests, v, app, region)
		}
		gauge(m.inFlight, s.InFlight, app)
		m.breakers.collect(ch, app, s)
		for k, inst := range s.Instances {
			gauge(m.instanceInFlight, inst.InFlight, app, k.ID, k.Region)
		}
	})
	if m.rec.Connections != nil {
		m.rec.Connections(func(app, addr string, n int) {
			gauge(m.connections, int64(n), app, addr)
		})
	}
	if m.AccessLogDropped != nil {
		counter(m.accessLogDropped, m.AccessLogDropped())
	}
	if m.health == nil {
		return
	}
	ejections, failures := m.health()
	for app, n := range ejections {
		counter(m.ejections, n, app)
	}
	for app, n := range failures {
		counter(m.healthFailures, n, app)
	}
}

// LatencyBuckets turns counts per traffic.Buckets bucket (the last one
// over them) into Prometheus' cumulative buckets and the total count.
func LatencyBuckets(counts []uint64) (map[float64]uint64, uint64) {
	buckets := make(map[float64]uint64, len(traffic.Buckets))
	var cum, count uint64
	for i, v := range counts {
		count += v
		if i < len(traffic.Buckets) {
			cum += v
			buckets[traffic.Buckets[i]] = cum
		}
	}
	return buckets, count
}
