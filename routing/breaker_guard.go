package routing

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// A guard is one app's circuit breakers and retry budget under one rules
// document: the state a Router keeps of the policies the document gives
// the app. A document put in force starts them afresh (closed, nothing in
// flight), as it does its rate limits.
type guard struct {
	r     *Router
	rules *Rules // the document it is of
	app   string
	br    *appBreaker // the app's breaker; nil: none
	// subsets are the breakers of the subsets of the app's rules, with
	// per_subset; a request routed to none of them (no rules, a fallback
	// to any instance, a subset only a trusted proxy named) has br.
	subsets map[*Subset]*appBreaker
	budget  *retryBudget // nil: none
}

// An appBreaker is one breaker of a guard: the app's, or one subset's.
type appBreaker struct {
	breaker
	g      *guard
	subset string // the subset's label, "" for the app's
	reason string // the 503's body while it is open
}

func (g *guard) newBreaker(cfg *breakerConfig, subset string) *appBreaker {
	b := &appBreaker{breaker: breaker{cfg: *cfg}, g: g, subset: subset}
	what := g.app
	if subset != "" {
		what = fmt.Sprintf("%s's subset %s", g.app, subset)
	}
	b.reason = fmt.Sprintf("circuit open: %s is failing, its requests are refused for %v before %d probes\n", what, cfg.open, cfg.halfOpen)
	return b
}

// of returns the breaker of a request routed to sub (nil: the app as a
// whole).
func (g *guard) of(sub *Subset) *appBreaker {
	if b := g.subsets[sub]; b != nil {
		return b
	}
	return g.br
}

// each calls f with each of g's breakers.
func (g *guard) each(f func(*appBreaker)) {
	if g.br != nil {
		f(g.br)
	}
	for _, b := range g.subsets {
		f(b)
	}
}

// guardSlot holds an app's current guard.
type guardSlot struct{ cur atomic.Pointer[guard] }

// guardOf returns app's guard under rules, nil when rules give it neither
// a breaker nor a retry budget.
func (r *Router) guardOf(rules *Rules, app string) *guard {
	if slot := r.guards.Lookup(app); slot != nil {
		if g := slot.cur.Load(); g != nil && g.rules == rules {
			return g // the document's guard, made already
		}
	}
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
		g.br = g.newBreaker(br, "")
		if a := rules.apps[app]; br.perSubset && a != nil && len(a.subsets) > 0 {
			g.subsets = make(map[*Subset]*appBreaker, len(a.subsets))
			for _, sub := range a.subsets {
				g.subsets[sub] = g.newBreaker(br, sub.Label())
			}
		}
	}
	if bu != nil {
		g.budget = &retryBudget{ratio: bu.ratio, min: int64(bu.min)}
	}
	if !slot.cur.CompareAndSwap(old, g) {
		return slot.cur.Load() // another request made it first
	}
	if old != nil {
		old.closeAll() // the old document's breakers are gone
	}
	return g
}

// closeAll says closed for each of g's breakers that is not: a
// document's breakers start closed, and one it no longer has would
// otherwise be shown open for good.
func (g *guard) closeAll() {
	g.each(func(b *appBreaker) {
		if BreakerState(b.state.Load()) != BreakerClosed {
			g.r.breakerMoved(g.app, b.subset, BreakerClosed)
		}
	})
}

// resetGuards forgets the breakers and retry budgets of the documents
// before the one in force, saying closed for each breaker that was not:
// the new document's start closed, and an app it gives none (nor asks of
// again) would otherwise be shown open for good.
func (r *Router) resetGuards() {
	r.guards.DeleteFunc(func(app string, s *guardSlot) bool {
		if g := s.cur.Load(); g != nil {
			g.closeAll()
		}
		return true
	})
}

// moved reports a move of b, unless its guard is no longer its app's
// (a request let through before a reload): its moves are no state in
// force.
func (b *appBreaker) moved(to BreakerState) {
	g := b.g
	if s := g.r.guards.Lookup(g.app); s != nil && s.cur.Load() == g {
		g.r.breakerMoved(g.app, b.subset, to)
	}
}

// admit decides a request routed as rt against the breaker of its app,
// or of its subset (per_subset), and counts it in flight for its app's
// retry budget: false, with rt's Answer the breaker's 503, when the
// breaker refuses it. A subset's open breaker refuses its requests: they
// are not sent to another subset, which the rules keep them from.
func (r *Router) admit(rules *Rules, rt *Route) bool {
	g := r.guardOf(rules, rt.App)
	if g == nil {
		return true
	}
	pass := Guard{g: g}
	if g.br != nil {
		b := g.of(rt.Subset)
		if gen, closed := b.closedGen(); closed { // no clock read
			pass.b, pass.gen = b, gen
		} else {
			now := r.now()
			ok, probe, moved, gen := b.admit(now)
			if moved {
				b.moved(BreakerHalfOpen)
			}
			if !ok {
				rt.Answer = Answer{Status: 503, Reason: b.reason}
				rt.Limit = Limited{open: b, retry: b.halfAt.Load() - now}
				rt.Instances = nil
				return false
			}
			pass.b, pass.gen, pass.probe = b, gen, probe
		}
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

func (r *Router) breakerMoved(app, subset string, to BreakerState) {
	if f := r.cfg.OnBreaker; f != nil {
		f(app, subset, to)
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
	b     *appBreaker // the breaker it went through; nil: none
	gen   uint32      // the breaker's state it was let through in
	probe bool        // one of a half-open breaker's probes
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
	b := p.b
	if b == nil {
		return
	}
	slow := b.cfg.slow > 0 && d >= b.cfg.slow
	if to, moved := b.record(g.r.now(), p.gen, status >= 500, slow); moved {
		b.moved(to)
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
	if p.b != nil && p.probe {
		p.b.release(p.gen)
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

// OpenSubset returns the subset whose open breaker gave the 503 (the
// label of one of the app's rules' subsets, with per_subset), "" for
// the app's own breaker.
func (l *Limited) OpenSubset() string {
	if l.open == nil {
		return ""
	}
	return l.open.subset
}

// openHeaders sets an open breaker's 503 headers: the reason, and
// Retry-After, the whole seconds until it lets probes through (at least
// 1).
func (l *Limited) openHeaders(set func(name, value string)) {
	set(BreakerReasonHeader, "circuit open")
	set("Retry-After", strconv.Itoa(l.RetryAfter()))
}
