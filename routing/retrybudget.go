package routing

import "sync/atomic"

// The defaults of a retry budget's settings (a rules document's
// retry_budget: {}), Envoy's.
const (
	// DefaultRetryBudgetRatio is the share of an app's requests in flight
	// that may be retrying.
	DefaultRetryBudgetRatio = 0.2
	// DefaultRetryBudgetMinConcurrency is how many of an app's requests
	// may be retrying whatever the requests in flight.
	DefaultRetryBudgetMinConcurrency = 3
)

// A retryBudget bounds an app's retries, as Envoy's retry_budget: at most
// max(minConcurrency, ratio × requests in flight) of its requests in
// flight are retrying. A request is counted in flight from its admission
// (Router.Limit) to its end (Guard.Done or Abandon), and retrying from
// its first retry to its end. Lock-free.
type retryBudget struct {
	ratio    float64
	min      int64
	active   atomic.Int64 // the app's requests in flight
	retrying atomic.Int64 // those that have retried
}

// allow reports whether a request may be sent again; first says it has
// not been yet (it then takes its place among those retrying).
func (b *retryBudget) allow(first bool) bool {
	limit := max(b.min, int64(b.ratio*float64(b.active.Load())))
	if !first {
		return b.retrying.Load() <= limit // its own place among them
	}
	if b.retrying.Add(1) > limit {
		b.retrying.Add(-1)
		return false
	}
	return true
}
