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
// (routing.Config.OnBreaker). A nil Recorder counts nothing.
func (r *Recorder) BreakerMoved(app string, to routing.BreakerState) {
	if r != nil {
		a := r.App(app)
		a.breaker.state.Store(int32(to))
		a.breaker.moves[to].Add(1)
	}
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
	r.Each(func(_ string, a *App) { a.breaker.state.Store(int32(routing.BreakerClosed)) })
}

func (a *App) breakerSnapshot() BreakerSnapshot {
	s := BreakerSnapshot{State: routing.BreakerState(a.breaker.state.Load()),
		Refused: a.breaker.refused.Load(), RetriesDenied: a.breaker.denied.Load()}
	for i := range s.Moves {
		s.Moves[i] = a.breaker.moves[i].Load()
	}
	return s
}

// breakerRefused counts the request as answered 503 by its app's open
// circuit breaker.
func (q *Request) breakerRefused() {
	if q.app != nil {
		q.app.breaker.refused.Add(1)
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
