package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// breakerDescs are the circuit breakers' and retry budgets' metrics (the
// traffic rules' breaker and retry_budget), prefix <namespace>_gateway_:
//
//   - breaker_state{app}: 0 closed, 1 open, 2 half-open;
//   - breaker_transitions_total{app, to}: moves to closed, open or
//     half_open;
//   - breaker_rejected_total{app}: requests an open breaker answered 503;
//   - retries_budget_exhausted_total{app}: retries the retry budget kept
//     from being made.
//
// An app has them from its breaker's first move or its budget's first
// refusal on: the apps without either add no series.
type breakerDescs struct {
	state, moves, rejected, exhausted *prometheus.Desc
}

func newBreakerDescs(d func(name, help string, labels ...string) *prometheus.Desc) breakerDescs {
	return breakerDescs{
		state:     d("breaker_state", "The state of each application's circuit breaker: 0 closed, 1 open, 2 half-open.", "app"),
		moves:     d("breaker_transitions_total", "Moves of each application's circuit breaker, by the state it moved to (closed, open, half_open).", "app", "to"),
		rejected:  d("breaker_rejected_total", "Requests an open circuit breaker answered 503, by application.", "app"),
		exhausted: d("retries_budget_exhausted_total", "Retries an application's retry budget kept from being made, by application.", "app"),
	}
}

func (b breakerDescs) describe(ch chan<- *prometheus.Desc) {
	ch <- b.state
	ch <- b.moves
	ch <- b.rejected
	ch <- b.exhausted
}

func (b breakerDescs) collect(ch chan<- prometheus.Metric, app string, s traffic.BreakerSnapshot) {
	if s == (traffic.BreakerSnapshot{}) {
		return
	}
	ch <- prometheus.MustNewConstMetric(b.state, prometheus.GaugeValue, float64(s.State), app)
	for to, n := range s.Moves {
		ch <- prometheus.MustNewConstMetric(b.moves, prometheus.CounterValue, float64(n), app, routing.BreakerState(to).String())
	}
	ch <- prometheus.MustNewConstMetric(b.rejected, prometheus.CounterValue, float64(s.Refused), app)
	ch <- prometheus.MustNewConstMetric(b.exhausted, prometheus.CounterValue, float64(s.RetriesDenied), app)
}
