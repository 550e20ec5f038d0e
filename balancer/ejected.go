package balancer

import (
	"cmp"
	"slices"
	"strconv"
	"time"
)

// Ejection is an instance the balancer ejected after failed calls
// (passive health) and that no call has succeeded on since.
type Ejection struct {
	// App (upper case), Region ("" for the local region) and ID name the
	// instance.
	App, Region, ID string
	// Since is when its run of failures first ejected it: an instance
	// tried again after Cooldown that fails again stays ejected since
	// then. Until is when its cooldown ends and it is tried again; once
	// past, the next call tries it, and a failure ejects it again at
	// once: it stays an Ejection until a call to it succeeds.
	Since, Until time.Time
	// Fails is its consecutive failed calls, and Last the kind of the
	// last: why it is out (a timeout ejects at once).
	Fails int
	Last  Failure
}

// Reason says why the instance is out, as "3 failed calls in a row,
// the last refused" or "timeout".
func (e Ejection) Reason() string {
	if e.Fails <= 1 {
		return e.Last.String()
	}
	return strconv.Itoa(e.Fails) + " failed calls in a row, the last " + e.Last.String()
}

// Ejected returns the instances ejected and not back yet (no call to them
// has succeeded since), by app, region and id. It reads what the
// balancer keeps of each instance it has seen fail: a pass over them, for
// an operator's page or a script, not a request's path. An instance that
// keeps failing stays listed across its cooldowns, rather than coming and
// going with each retry.
func (b *Balancer) Ejected() []Ejection {
	if b.failing.Load() == 0 {
		return nil
	}
	now := b.cfg.Now().UnixNano()
	var out []Ejection
	b.states.Range(func(k, v any) bool {
		h, key := v.(*instanceState), k.(instanceKey)
		until, since := h.ejectedUntil.Load(), h.ejectedSince.Load()
		if since == 0 {
			if until <= now {
				return true
			}
			since = now // ejected this instant, Since not stored yet
		}
		out = append(out, Ejection{App: key.app, Region: key.region, ID: key.id,
			Since: time.Unix(0, since), Until: time.Unix(0, until),
			Fails: int(h.fails.Load()), Last: Failure(h.lastFailure.Load())})
		return true
	})
	slices.SortFunc(out, func(x, y Ejection) int {
		return cmp.Or(cmp.Compare(x.App, y.App), cmp.Compare(x.Region, y.Region), cmp.Compare(x.ID, y.ID))
	})
	return out
}

// CheckFailure is an instance failing its active health check (Checker),
// out of rotation until it passes again.
type CheckFailure struct {
	// App (upper case) and ID name the instance, of the local region: the
	// Checker checks no other.
	App, ID string
	// Since is when it failed the check that took it out; Reason why its
	// last check failed (the answer's status, a timeout, a refusal).
	Since  time.Time
	Reason string
}

// Failing returns the instances failing their health check now, by app
// and id: a pass over the instances checked, for an operator's page.
func (c *Checker) Failing() []CheckFailure {
	if !c.anyDown() {
		return nil
	}
	var out []CheckFailure
	c.states.Range(func(k, v any) bool {
		st, key := v.(*checkState), k.(healthKey)
		if !st.down.Load() {
			return true
		}
		f := CheckFailure{App: key.app, ID: key.id, Since: time.Unix(0, st.since.Load())}
		if r := st.reason.Load(); r != nil {
			f.Reason = *r
		}
		out = append(out, f)
		return true
	})
	slices.SortFunc(out, func(x, y CheckFailure) int { return cmp.Or(cmp.Compare(x.App, y.App), cmp.Compare(x.ID, y.ID)) })
	return out
}

// Failing returns the instances failing the active health check of the
// balancer's Checker, none without one (Ejected and Failing are what
// an operator's page shows of the instances out of rotation).
func (b *Balancer) Failing() []CheckFailure {
	if b.cfg.Checker == nil {
		return nil
	}
	return b.cfg.Checker.Failing()
}
