package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// breakerDescs are the circuit breakers' and retry budgets' metrics (the
// traffic rules' breaker and retry_budget), prefix <namespace>_gateway_:
//
//   - breaker_state{app, subset}: 0 closed, 1 open, 2 half-open;
//   - breaker_transitions_total{app, subset, to}: moves to closed, open
//     or half_open;
//   - breaker_rejected_total{app, subset}: requests an open breaker
//     answered 503;
//   - retries_budget_exhausted_total{app}: retries the retry budget kept
//     from being made.
//
// subset is "" for the app's own breaker, a subset's label for the
// breaker of that subset (a breaker with per_subset). An app has them
// from its breaker's first move or its budget's first refusal on, a
// subset from its breaker's first move: the others add no series.
type breakerDescs struct {
	state, moves, rejected, exhausted *prometheus.Desc
}

func newBreakerDescs(d func(name, help string, labels ...string) *prometheus.Desc) breakerDescs {
	return breakerDescs{
		state:     d("breaker_state", "The state of each application's circuit breaker, or its subset's (subset empty: the application's): 0 closed, 1 open, 2 half-open.", "app", "subset"),
		moves:     d("breaker_transitions_total", "Moves of each application's circuit breaker, or its subset's, by the state it moved to (closed, open, half_open).", "app", "subset", "to"),
		rejected:  d("breaker_rejected_total", "Requests an open circuit breaker answered 503, by application and subset.", "app", "subset"),
		exhausted: d("retries_budget_exhausted_total", "Retries an application's retry budget kept from being made, by application.", "app"),
	}
}

func (b breakerDescs) describe(ch chan<- *prometheus.Desc) {
	ch <- b.state
	ch <- b.moves
	ch <- b.rejected
	ch <- b.exhausted
}

func (b breakerDescs) collect(ch chan<- prometheus.Metric, app string, s traffic.Snapshot) {
	if s.Breaker != (traffic.BreakerSnapshot{}) {
		b.breaker(ch, app, "", s.Breaker)
		ch <- prometheus.MustNewConstMetric(b.exhausted, prometheus.CounterValue, float64(s.Breaker.RetriesDenied), app)
	}
	for subset, sb := range s.SubsetBreakers {
		b.breaker(ch, app, subset, sb)
	}
}

// breaker sends the series of one breaker: the app's (subset "") or a
// subset's.
func (b breakerDescs) breaker(ch chan<- prometheus.Metric, app, subset string, s traffic.BreakerSnapshot) {
	ch <- prometheus.MustNewConstMetric(b.state, prometheus.GaugeValue, float64(s.State), app, subset)
	for to, n := range s.Moves {
		ch <- prometheus.MustNewConstMetric(b.moves, prometheus.CounterValue, float64(n), app, subset, routing.BreakerState(to).String())
	}
	ch <- prometheus.MustNewConstMetric(b.rejected, prometheus.CounterValue, float64(s.Refused), app, subset)
}
