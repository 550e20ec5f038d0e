package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/internal/promtext"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
	"github.com/eurekagate/eurekagate/traffic/metrics"
)

// The breakers' series: the app's own breaker under subset "", with the
// app's retry budget; a subset's breaker (per_subset) under its label,
// without a budget of its own; an app whose breakers never moved has
// none.
func TestBreakerCollector(t *testing.T) {
	rec := traffic.New()
	rec.BreakerMoved("ORDERS", "", routing.BreakerOpen)
	rec.RetryDenied("ORDERS")
	rec.BreakerMoved("BILLING", "track=canary", routing.BreakerOpen)
	rec.BreakerMoved("BILLING", "track=canary", routing.BreakerHalfOpen)
	rec.App("QUIET")
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewTraffic(rec, nil, "eureka"))
	const want = `
# HELP eureka_gateway_breaker_state The state of each application's circuit breaker, or its subset's (subset empty: the application's): 0 closed, 1 open, 2 half-open.
# TYPE eureka_gateway_breaker_state gauge
eureka_gateway_breaker_state{app="BILLING",subset="track=canary"} 2
eureka_gateway_breaker_state{app="ORDERS",subset=""} 1
# HELP eureka_gateway_breaker_transitions_total Moves of each application's circuit breaker, or its subset's, by the state it moved to (closed, open, half_open).
# TYPE eureka_gateway_breaker_transitions_total counter
eureka_gateway_breaker_transitions_total{app="BILLING",subset="track=canary",to="closed"} 0
eureka_gateway_breaker_transitions_total{app="BILLING",subset="track=canary",to="half_open"} 1
eureka_gateway_breaker_transitions_total{app="BILLING",subset="track=canary",to="open"} 1
eureka_gateway_breaker_transitions_total{app="ORDERS",subset="",to="closed"} 0
eureka_gateway_breaker_transitions_total{app="ORDERS",subset="",to="half_open"} 0
eureka_gateway_breaker_transitions_total{app="ORDERS",subset="",to="open"} 1
# HELP eureka_gateway_breaker_rejected_total Requests an open circuit breaker answered 503, by application and subset.
# TYPE eureka_gateway_breaker_rejected_total counter
eureka_gateway_breaker_rejected_total{app="BILLING",subset="track=canary"} 0
eureka_gateway_breaker_rejected_total{app="ORDERS",subset=""} 0
# HELP eureka_gateway_retries_budget_exhausted_total Retries an application's retry budget kept from being made, by application.
# TYPE eureka_gateway_retries_budget_exhausted_total counter
eureka_gateway_retries_budget_exhausted_total{app="ORDERS"} 1
`
	names := []string{"eureka_gateway_breaker_state", "eureka_gateway_breaker_transitions_total",
		"eureka_gateway_breaker_rejected_total", "eureka_gateway_retries_budget_exhausted_total"}
	promtext.CompareLines(t, promtext.Exposition(t, reg, names...), promtext.SortedLines(want))
}
