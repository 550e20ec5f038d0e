package traffic

import (
	"sync/atomic"

	"github.com/eurekagate/eurekagate/routing"
)

// breakerCounts are an app's circuit breaker's and retry budget's
// counters (the traffic rules' breaker and retry_budget).
type breakerCounts struct {
	state   atomic.Int32 // a routing.BreakerState, as last moved to
	moves   [3]atomic.Uint64
	refused atomic.Uint64 // requests an open breaker answered 503
	denied  atomic.Uint64 // retries the retry budget kept from being made
}

// BreakerSnapshot is an app's circuit breaker and retry budget at one
// moment.
type BreakerSnapshot struct {
	// State is the breaker's state: closed when it has none.
	State routing.BreakerState
	// Moves counts the breaker's moves to each state, by state.
	Moves [3]uint64
	// Refused are the requests the open breaker answered 503.
	Refused uint64
	// RetriesDenied are the retries the app's retry budget kept from
	// being made.
	RetriesDenied uint64
}

// BreakerMoved counts a move of app's circuit breaker to state to
// (routing.Config.OnBreaker): the app's own when subset is "", else the
// breaker of that subset (per_subset). A nil Recorder counts nothing.
func (r *Recorder) BreakerMoved(app, subset string, to routing.BreakerState) {
	if r != nil {
		c := r.App(app).breakerOf(subset)
		c.state.Store(int32(to))
		c.moves[to].Add(1)
	}
}

// breakerOf returns the counts of the app's breaker ("") or of a
// subset's.
func (a *App) breakerOf(subset string) *breakerCounts {
	if subset == "" {
		return &a.breaker
	}
	return a.subsetBreakers.Get(subset)
}

// RetryDenied counts a retry app's retry budget kept from being made
// (routing.Config.OnRetryDenied). A nil Recorder counts nothing.
func (r *Recorder) RetryDenied(app string) {
	if r != nil {
		r.App(app).breaker.denied.Add(1)
	}
}

// BreakersClosed sets every app's breaker state to closed, the state a
// router's breakers start in: a host whose Recorder outlives its routers
// (Caddy's, kept across config reloads) calls it with its new routers,
// so that an old router's open breaker is not shown for the new one's.
func (r *Recorder) BreakersClosed() {
	if r == nil {
		return
	}
	r.Each(func(_ string, a *App) {
		a.breaker.state.Store(int32(routing.BreakerClosed))
		for _, c := range a.subsetBreakers.Snapshot() {
			c.state.Store(int32(routing.BreakerClosed))
		}
	})
}

func (c *breakerCounts) snapshot() BreakerSnapshot {
	s := BreakerSnapshot{State: routing.BreakerState(c.state.Load()),
		Refused: c.refused.Load(), RetriesDenied: c.denied.Load()}
	for i := range s.Moves {
		s.Moves[i] = c.moves[i].Load()
	}
	return s
}

// subsetBreakersSnapshot returns the subsets' breakers by label, nil
// when the app has none.
func (a *App) subsetBreakersSnapshot() map[string]BreakerSnapshot {
	var m map[string]BreakerSnapshot
	for label, c := range a.subsetBreakers.Snapshot() {
		if m == nil {
			m = map[string]BreakerSnapshot{}
		}
		m[label] = c.snapshot()
	}
	return m
}

// breakerRefused counts the request as answered 503 by the open circuit
// breaker of its app ("") or of subset.
func (q *Request) breakerRefused(subset string) {
	if q.app != nil {
		q.app.breakerOf(subset).refused.Add(1)
	}
}

// Abandon ends the count without counting the request served (its
// client went away), and its pass through the app's breaker and retry
// budget. Once the count has ended it does nothing.
func (o *Observed) Abandon() {
	o.guard.Abandon(o.Retries > 0)
	o.Request.Abandon()
}

// Guarded reports whether the request holds a pass of its app's breaker
// or retry budget that End or Abandon is to end, whether or not it is
// counted.
func (o *Observed) Guarded() bool { return o.guard.Held() }
