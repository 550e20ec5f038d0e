package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/internal/promtext"
	"github.com/eurekagate/eurekagate/traffic"
	"github.com/eurekagate/eurekagate/traffic/metrics"
)

// Durations that are exact in binary, so that the histogram's sum is
// exactly what the expected text says.
const (
	d2ms  = 1953125 * time.Nanosecond  // 2^-9 s: in the 2.5 ms bucket
	d31ms = 31250000 * time.Nanosecond // 2^-5 s: in the 50 ms bucket
)

// trafficRecorder is a Recorder with requests of ORDERS (three served,
// one in flight, failed attempts, a retry, an instance with one attempt
// in flight and two connections, another region's instance of the same
// id with two) and one of an unknown app.
func trafficRecorder() *traffic.Recorder {
	rec := traffic.New()
	orders := rec.App("ORDERS")
	i1 := orders.Instance("i-1")
	for _, d := range []time.Duration{d2ms, d31ms} {
		orders.Start()
		i1.Begin()
		i1.End()
		orders.Done("", []byte("GET"), 200, d, i1)
	}
	orders.Start()
	orders.Failed(traffic.Refused)
	orders.Failed(traffic.Timeout)
	orders.Retried()
	orders.Limited()
	orders.Limited()
	orders.Done("version=2.1", []byte("POST"), 503, 20*time.Second, nil)
	orders.Start() // in flight
	i1.Begin()
	eu := orders.InstanceIn("eu-west", "i-1") // another region's i-1: its own series
	eu.Begin()
	eu.Begin()
	unknown := rec.App(traffic.Unknown)
	unknown.Start()
	unknown.Done("", []byte("GET"), 503, 625*time.Microsecond, nil)
	rec.Connections = func(yield func(app, addr string, n int)) { yield("ORDERS", "127.0.0.1:9000", 2) }
	return rec
}

const trafficText = `
# HELP eureka_gateway_requests_total Requests the gateway served, by application, subset of its instances ("": any), method and status class.
# TYPE eureka_gateway_requests_total counter
eureka_gateway_requests_total{app="ORDERS",code="2xx",method="GET",subset=""} 2
eureka_gateway_requests_total{app="ORDERS",code="5xx",method="POST",subset="version=2.1"} 1
eureka_gateway_requests_total{app="unknown",code="5xx",method="GET",subset=""} 1
# HELP eureka_gateway_request_duration_seconds How long the gateway's requests took, by application.
# TYPE eureka_gateway_request_duration_seconds histogram
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="0.001"} 0
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="0.0025"} 1
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="0.005"} 1
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="0.01"} 1
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="0.025"} 1
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="0.05"} 2
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="0.1"} 2
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="0.25"} 2
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="0.5"} 2
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="1"} 2
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="2.5"} 2
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="5"} 2
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="10"} 2
eureka_gateway_request_duration_seconds_bucket{app="ORDERS",le="+Inf"} 3
eureka_gateway_request_duration_seconds_sum{app="ORDERS"} 20.033203125
eureka_gateway_request_duration_seconds_count{app="ORDERS"} 3
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="0.001"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="0.0025"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="0.005"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="0.01"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="0.025"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="0.05"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="0.1"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="0.25"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="0.5"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="1"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="2.5"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="5"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="10"} 1
eureka_gateway_request_duration_seconds_bucket{app="unknown",le="+Inf"} 1
eureka_gateway_request_duration_seconds_sum{app="unknown"} 0.000625
eureka_gateway_request_duration_seconds_count{app="unknown"} 1
# HELP eureka_gateway_upstream_failures_total Attempts that failed at an instance, by application and kind (refused, reset, timeout).
# TYPE eureka_gateway_upstream_failures_total counter
eureka_gateway_upstream_failures_total{app="ORDERS",kind="refused"} 1
eureka_gateway_upstream_failures_total{app="ORDERS",kind="reset"} 0
eureka_gateway_upstream_failures_total{app="ORDERS",kind="timeout"} 1
eureka_gateway_upstream_failures_total{app="unknown",kind="refused"} 0
eureka_gateway_upstream_failures_total{app="unknown",kind="reset"} 0
eureka_gateway_upstream_failures_total{app="unknown",kind="timeout"} 0
# HELP eureka_gateway_retries_total Attempts sent again to another instance, by application.
# TYPE eureka_gateway_retries_total counter
eureka_gateway_retries_total{app="ORDERS"} 1
eureka_gateway_retries_total{app="unknown"} 0
# HELP eureka_gateway_requests_limited_total Requests answered 429 by a rate limit of the traffic rules, by application.
# TYPE eureka_gateway_requests_limited_total counter
eureka_gateway_requests_limited_total{app="ORDERS"} 2
eureka_gateway_requests_limited_total{app="unknown"} 0
# HELP eureka_gateway_ejections_total Instances taken out of rotation after failures (passive health), by application.
# TYPE eureka_gateway_ejections_total counter
eureka_gateway_ejections_total{app="ORDERS"} 2
# HELP eureka_gateway_health_check_failures_total Failed active health checks, by application.
# TYPE eureka_gateway_health_check_failures_total counter
eureka_gateway_health_check_failures_total{app="BILLING"} 3
# HELP eureka_gateway_requests_in_flight Requests being served, by application.
# TYPE eureka_gateway_requests_in_flight gauge
eureka_gateway_requests_in_flight{app="ORDERS"} 1
eureka_gateway_requests_in_flight{app="unknown"} 0
# HELP eureka_gateway_instance_requests_in_flight Requests being served by each instance, by application, instance id and region (empty: the local region).
# TYPE eureka_gateway_instance_requests_in_flight gauge
eureka_gateway_instance_requests_in_flight{app="ORDERS",instance="i-1",region=""} 1
eureka_gateway_instance_requests_in_flight{app="ORDERS",instance="i-1",region="eu-west"} 2
# HELP eureka_gateway_instance_connections Connections the gateway holds to each instance, by its address.
# TYPE eureka_gateway_instance_connections gauge
eureka_gateway_instance_connections{address="127.0.0.1:9000",app="ORDERS"} 2
`

// The traffic collector's names, labels, types, help and values, the
// latency histogram's cumulative buckets, sum and count among them, with
// the balancers' ejections and the health checks' failures: nothing more,
// nothing less. The registry is pedantic: it checks what the collector
// collects against what it describes.
func TestTrafficCollector(t *testing.T) {
	health := func() (map[string]uint64, map[string]uint64) {
		return map[string]uint64{"ORDERS": 2}, map[string]uint64{"BILLING": 3}
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewTraffic(trafficRecorder(), health, "eureka"))
	promtext.CompareLines(t, promtext.Exposition(t, reg), promtext.SortedLines(trafficText))
}

// The namespace prefixes every name (Caddy's are caddy_eureka_gateway_*);
// without a health func and a Connections func there are no ejections,
// health-check failures or connections; the counters are read at scrape
// time, so that a second scrape sees what was recorded since.
func TestTrafficCollectorNamespaceAndScrapeTime(t *testing.T) {
	rec := traffic.New()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewTraffic(rec, nil, "caddy_eureka"))
	if got := promtext.Exposition(t, reg); len(got) != 0 {
		t.Errorf("an empty recorder gives %q", got)
	}
	a := rec.App("ORDERS")
	a.Start()
	a.Done("", []byte("DELETE"), 204, d2ms, nil)
	const want = `
# HELP caddy_eureka_gateway_requests_total Requests the gateway served, by application, subset of its instances ("": any), method and status class.
# TYPE caddy_eureka_gateway_requests_total counter
caddy_eureka_gateway_requests_total{app="ORDERS",code="2xx",method="DELETE",subset=""} %d
# HELP caddy_eureka_gateway_requests_in_flight Requests being served, by application.
# TYPE caddy_eureka_gateway_requests_in_flight gauge
caddy_eureka_gateway_requests_in_flight{app="ORDERS"} 0
`
	names := []string{"caddy_eureka_gateway_requests_total", "caddy_eureka_gateway_requests_in_flight",
		"caddy_eureka_gateway_ejections_total", "caddy_eureka_gateway_health_check_failures_total", "caddy_eureka_gateway_instance_connections"}
	promtext.CompareLines(t, promtext.Exposition(t, reg, names...), promtext.SortedLines(strings.Replace(want, "%d", "1", 1)))
	a.Start()
	a.Done("", []byte("DELETE"), 204, d2ms, nil)
	promtext.CompareLines(t, promtext.Exposition(t, reg, names...), promtext.SortedLines(strings.Replace(want, "%d", "2", 1)))
	for _, l := range promtext.Exposition(t, reg) {
		if f := promtext.Family(l); !strings.HasPrefix(f, "caddy_eureka_gateway_") {
			t.Errorf("%s lacks the namespace", l)
		}
	}
}
