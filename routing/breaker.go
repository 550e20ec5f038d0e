package routing

import (
	"sync"
	"sync/atomic"
	"time"
)

// BreakerState is the state of an app's circuit breaker: the value of the
// gateways' breaker_state gauge (Resilience4j's numbering).
type BreakerState int32

const (
	// BreakerClosed lets every request through, counting their outcomes.
	BreakerClosed BreakerState = iota
	// BreakerOpen answers every request 503 without sending it on.
	BreakerOpen
	// BreakerHalfOpen lets a bounded number of probes through.
	BreakerHalfOpen
)

var breakerStates = [...]string{"closed", "open", "half_open"}

// String names the state as the metrics' to label and the logs do:
// closed, open or half_open.
func (s BreakerState) String() string { return breakerStates[s] }

// The defaults of a breaker's settings (a rules document's breaker: {}).
const (
	// DefaultBreakerErrorRatio is the share of failed requests over the
	// window that opens the breaker.
	DefaultBreakerErrorRatio = 0.5
	// DefaultBreakerSlowRatio is the share of slow requests over the
	// window that opens the breaker, when slow is set (Resilience4j's
	// slowCallRateThreshold: all of them).
	DefaultBreakerSlowRatio = 1.0
	// DefaultBreakerMinRequests is how many requests the window must hold
	// before its ratios count.
	DefaultBreakerMinRequests = 20
	// DefaultBreakerWindow is how far back the ratios look.
	DefaultBreakerWindow = 10 * time.Second
	// DefaultBreakerOpen is how long an open breaker refuses every
	// request before it lets probes through.
	DefaultBreakerOpen = 5 * time.Second
	// DefaultBreakerHalfOpenRequests is how many probes a half-open
	// breaker lets through, all of which must succeed for it to close.
	DefaultBreakerHalfOpenRequests = 3
)

// A breakerConfig is a breaker's settings as a rules document gives them,
// defaults filled in.
type breakerConfig struct {
	errorRatio  float64
	slow        time.Duration // 0: no request counts as slow
	slowRatio   float64
	consecutive int // 0: no count of consecutive failures
	minRequests int
	window      time.Duration
	open        time.Duration
	halfOpen    int
	// perSubset keeps a breaker for each subset of the app's rules
	// (per_subset), besides the app's own for the requests routed to no
	// subset of them.
	perSubset bool
}

// windowSlots is how many slots a breaker's window is kept in: the window
// slides by a tenth of itself.
const windowSlots = 10

// A slot counts the requests that ended within one tenth of the window.
type slot struct {
	at                   int64 // the slot's number since the clock's zero
	calls, failed, slowN int
}

// A breaker is one app's circuit breaker. Its state is read without a
// lock by each request while it is closed; its outcomes, and the
// decisions while open or half-open, take the app's own lock, so that no
// lock is shared by the apps.
type breaker struct {
	cfg   breakerConfig
	state atomic.Int32 // a BreakerState
	// gen moves at each transition: an outcome of a request let through
	// in an earlier state does not count in the new one.
	gen atomic.Uint32
	// halfAt is when an open breaker lets probes through, in the router
	// clock's nanoseconds.
	halfAt atomic.Int64

	mu          sync.Mutex
	slots       [windowSlots]slot
	consecutive int
	probes      int // let through since half-open
	probesOK    int
}

// closedGen returns the state's generation while the breaker is closed,
// when a request goes on whatever the time.
func (b *breaker) closedGen() (gen uint32, closed bool) {
	if BreakerState(b.state.Load()) != BreakerClosed {
		return 0, false
	}
	return b.gen.Load(), true
}

// admit decides a request through a breaker its caller found not
// closed (closedGen, which lets the closed one's requests through
// without a clock read): ok says it goes on, probe that it is one of a
// half-open breaker's probes, gen the state it was let through in, and
// moved that it moved the breaker to half-open.
func (b *breaker) admit(now int64) (ok, probe, moved bool, gen uint32) {
	if BreakerState(b.state.Load()) == BreakerOpen && now < b.halfAt.Load() {
		return false, false, false, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch BreakerState(b.state.Load()) {
	case BreakerClosed: // closed meanwhile
		return true, false, false, b.gen.Load()
	case BreakerOpen:
		if now < b.halfAt.Load() {
			return false, false, false, 0
		}
		b.move(BreakerHalfOpen, now)
		moved = true
	}
	if b.probes >= b.cfg.halfOpen {
		return false, false, moved, 0
	}
	b.probes++
	return true, true, moved, b.gen.Load()
}

// record counts the outcome of a request let through in state gen, and
// returns the state it moved the breaker to, if it did.
func (b *breaker) record(now int64, gen uint32, failed, slow bool) (to BreakerState, moved bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if gen != b.gen.Load() {
		return 0, false
	}
	switch BreakerState(b.state.Load()) {
	case BreakerHalfOpen:
		if failed || slow {
			b.move(BreakerOpen, now)
			return BreakerOpen, true
		}
		if b.probesOK++; b.probesOK >= b.cfg.halfOpen {
			b.move(BreakerClosed, now)
			return BreakerClosed, true
		}
	case BreakerClosed:
		b.count(now, failed, slow)
		if b.trips(now) {
			b.move(BreakerOpen, now)
			return BreakerOpen, true
		}
	}
	return 0, false
}

// release gives back the probe of a request let through in state gen
// whose client went away before its answer: it tells nothing of the app.
func (b *breaker) release(gen uint32) {
	b.mu.Lock()
	if gen == b.gen.Load() && BreakerState(b.state.Load()) == BreakerHalfOpen {
		b.probes--
	}
	b.mu.Unlock()
}

// move puts the breaker in state to at now. Held: b.mu.
func (b *breaker) move(to BreakerState, now int64) {
	switch to {
	case BreakerOpen:
		b.halfAt.Store(now + int64(b.cfg.open))
	case BreakerHalfOpen:
		b.probes, b.probesOK = 0, 0
	case BreakerClosed:
		b.slots, b.consecutive = [windowSlots]slot{}, 0
	}
	b.gen.Add(1)
	b.state.Store(int32(to))
}

// count adds an outcome to the window. Held: b.mu.
func (b *breaker) count(now int64, failed, slow bool) {
	at := now / b.slotLen()
	s := &b.slots[at%windowSlots]
	if s.at != at {
		*s = slot{at: at}
	}
	s.calls++
	if failed {
		s.failed++
		b.consecutive++
	} else {
		b.consecutive = 0
	}
	if slow {
		s.slowN++
	}
}

// trips reports whether the window's outcomes open the breaker. Held:
// b.mu.
func (b *breaker) trips(now int64) bool {
	if b.cfg.consecutive > 0 && b.consecutive >= b.cfg.consecutive {
		return true
	}
	at := now / b.slotLen()
	var calls, failed, slow int
	for _, s := range b.slots {
		if s.at > at-windowSlots && s.at <= at {
			calls, failed, slow = calls+s.calls, failed+s.failed, slow+s.slowN
		}
	}
	if calls == 0 || calls < b.cfg.minRequests {
		return false
	}
	return float64(failed) >= b.cfg.errorRatio*float64(calls) ||
		b.cfg.slow > 0 && float64(slow) >= b.cfg.slowRatio*float64(calls)
}

func (b *breaker) slotLen() int64 { return max(1, int64(b.cfg.window)/windowSlots) }
