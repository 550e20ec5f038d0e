package metrics

import "github.com/prometheus/client_golang/prometheus"

// Redis exports the Redis of a gateway's shared rate limits
// (routing.SharedLimits), read at scrape time: <namespace>_gateway_
// redis_errors_total, the calls to Redis that failed, and
// redis_up, 1 while Redis answers and 0 while the shared limits fail
// open or closed without it.
func Redis(errors func() uint64, up func() bool, namespace string) prometheus.Collector {
	return redisCollector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: namespace, Subsystem: "gateway", Name: "redis_errors_total",
			Help: "Calls to the Redis of the shared rate limits that failed."}, func() float64 { return float64(errors()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Subsystem: "gateway", Name: "redis_up",
			Help: "1 while the Redis of the shared rate limits answers, 0 while they fail open or closed without it."}, func() float64 {
			if up() {
				return 1
			}
			return 0
		}),
	}
}

type redisCollector [2]prometheus.Collector

func (c redisCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c {
		m.Describe(ch)
	}
}

func (c redisCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		m.Collect(ch)
	}
}
