package routing

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// A guard is one app's circuit breaker and retry budget under one rules
// document: the state a Router keeps of the policies the document gives
// the app. A document put in force starts them afresh (closed, nothing in
// flight), as it does its rate limits.
type guard struct {
	r      *Router
	rules  *Rules // the document it is of
	app    string
	br     *breaker     // nil: none
	budget *retryBudget // nil: none
	reason string       // the 503's body while the breaker is open
}

// guardSlot holds an app's current guard.
type guardSlot struct{ cur atomic.Pointer[guard] }

// guardOf returns app's guard under rules, nil when rules give it neither
// a breaker nor a retry budget.
func (r *Router) guardOf(rules *Rules, app string) *guard {
	br, bu := rules.policiesOf(app)
	if br == nil && bu == nil {
		return nil
	}
	slot := r.guards.Get(app)
	old := slot.cur.Load()
	if old != nil && old.rules == rules {
		return old
	}
	g := &guard{r: r, rules: rules, app: app}
	if br != nil {
		g.br = &breaker{cfg: *br}
		g.reason = fmt.Sprintf("circuit open: %s is failing, its requests are refused for %v before %d probes\n", app, br.open, br.halfOpen)
	}
	if bu != nil {
		g.budget = &retryBudget{ratio: bu.ratio, min: int64(bu.min)}
	}
	if !slot.cur.CompareAndSwap(old, g) {
		return slot.cur.Load() // another request made it first
	}
	if old != nil && old.br != nil && BreakerState(old.br.state.Load()) != BreakerClosed {
		r.breakerMoved(app, BreakerClosed) // the old document's breaker is gone
	}
	return g
}

// resetGuards forgets the breakers and retry budgets of the documents
// before the one in force, saying closed for each breaker that was not:
// the new document's start closed, and an app it gives none (nor asks of
// again) would otherwise be shown open for good.
func (r *Router) resetGuards() {
	r.guards.DeleteFunc(func(app string, s *guardSlot) bool {
		if g := s.cur.Load(); g != nil && g.br != nil && BreakerState(g.br.state.Load()) != BreakerClosed {
			r.breakerMoved(app, BreakerClosed)
		}
		return true
	})
}

// moved reports a move of g's breaker, unless g is no longer its app's
// (a request let through before a reload): its moves are no state in
// force.
func (g *guard) moved(to BreakerState) {
	if s := g.r.guards.Lookup(g.app); s != nil && s.cur.Load() == g {
		g.r.breakerMoved(g.app, to)
	}
}

// admit decides a request routed as rt against its app's breaker, and
// counts it in flight for its retry budget: false, with rt's Answer the
// breaker's 503, when the breaker refuses it.
func (r *Router) admit(rules *Rules, rt *Route) bool {
	g := r.guardOf(rules, rt.App)
	if g == nil {
		return true
	}
	pass := Guard{g: g}
	if g.br != nil {
		now := r.now()
		ok, probe, moved, gen := g.br.admit(now)
		if moved {
			g.moved(BreakerHalfOpen)
		}
		if !ok {
			rt.Answer = Answer{Status: 503, Reason: g.reason}
			rt.Limit = Limited{open: g, retry: g.br.halfAt.Load() - now}
			rt.Instances = nil
			return false
		}
		pass.gen, pass.probe = gen, probe
	}
	if g.budget != nil {
		g.budget.active.Add(1)
	}
	rt.Guard = pass
	return true
}

// now is the breakers' time: nanoseconds on Config.Clock, or on the
// monotonic clock.
func (r *Router) now() int64 {
	if r.cfg.Clock != nil {
		return r.cfg.Clock.Now().UnixNano()
	}
	return monotonic()
}

func (r *Router) breakerMoved(app string, to BreakerState) {
	if f := r.cfg.OnBreaker; f != nil {
		f(app, to)
	}
}

// AllowRetry is the app's retry budget, as balancer.Retry asks it.
func (g *guard) AllowRetry(first bool) bool {
	if g.budget.allow(first) {
		return true
	}
	if f := g.r.cfg.OnRetryDenied; f != nil {
		f(g.app)
	}
	return false
}

// A Guard is a request's pass through its app's circuit breaker and retry
// budget (Route.Guard, given by Router.Limit): the transport ends it once,
// with Done when the client has its status or Abandon when the client
// went away first (traffic.Observed does both), so that the breaker
// counts the outcome and the budget the request no longer in flight. Its
// zero value holds nothing.
type Guard struct {
	g     *guard
	gen   uint32 // the breaker's state it was let through in
	probe bool   // one of a half-open breaker's probes
}

// Held reports whether the pass is to be ended.
func (p *Guard) Held() bool { return p.g != nil }

// Done ends the pass of a request the client got status for after d;
// retried says it was sent to more than one instance. A 5xx (the
// instance's, or the gateway's 502 and 504 after a refused or reset
// connection or a timeout) is a failure to the breaker; a request that
// took the breaker's slow or longer is slow. Later calls do nothing.
func (p *Guard) Done(status int, d time.Duration, retried bool) {
	g := p.g
	if g == nil {
		return
	}
	p.g = nil
	g.end(retried)
	if g.br == nil {
		return
	}
	slow := g.br.cfg.slow > 0 && d >= g.br.cfg.slow
	if to, moved := g.br.record(g.r.now(), p.gen, status >= 500, slow); moved {
		g.moved(to)
	}
}

// Abandon ends the pass of a request whose client went away: it tells the
// breaker nothing, and a probe's place is given back. Later calls do
// nothing.
func (p *Guard) Abandon(retried bool) {
	g := p.g
	if g == nil {
		return
	}
	p.g = nil
	g.end(retried)
	if g.br != nil && p.probe {
		g.br.release(p.gen)
	}
}

// end counts the request out of its app's requests in flight.
func (g *guard) end(retried bool) {
	if g.budget == nil {
		return
	}
	g.budget.active.Add(-1)
	if retried {
		g.budget.retrying.Add(-1)
	}
}

// BreakerReasonHeader is the header of a breaker's 503 saying why the
// request was refused: "circuit open".
const BreakerReasonHeader = "Eurekagate-Reason"

// Open reports whether the answer is an open circuit breaker's 503.
func (l *Limited) Open() bool { return l.open != nil }

// openHeaders sets an open breaker's 503 headers: the reason, and
// Retry-After, the whole seconds until it lets probes through (at least
// 1).
func (l *Limited) openHeaders(set func(name, value string)) {
	set(BreakerReasonHeader, "circuit open")
	set("Retry-After", strconv.Itoa(l.RetryAfter()))
}
