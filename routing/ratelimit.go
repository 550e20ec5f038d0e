package routing

import (
	"fmt"
	"strconv"
	"time"

	"github.com/eurekagate/eurekagate/internal/ratelimit"
	"github.com/eurekagate/eurekagate/internal/ratelimit/redisrate"
)

// A limit is one rate limit of a rules document, compiled: a GCRA per
// key over its own limiter, so that its keys are apart from every other
// limit's. A document reloaded starts its limits full.
type limit struct {
	key     limitKey
	name    string // the header (canonical) or cookie a key reads
	perApp  bool   // a defaults limit: its keys are each app's apart
	count   int    // requests per period
	period  time.Duration
	burst   int
	scg     bool // Spring Cloud Gateway's X-RateLimit-* headers on its 429s
	lim     *ratelimit.Limiter
	label   string // "client", "header:X-Api-Key": the policy's name
	policy  string // RateLimit-Policy's value
	reason  string // the 429's body
	replen  string // X-RateLimit-Replenish-Rate: requests a second
	burstTx string // X-RateLimit-Burst-Capacity

	// A shared limit's (ratelimit_shared.go): shared: true, its
	// redis_failure, its leases, the 503's body when it fails closed.
	sharedDoc   bool
	failure     int8
	maxKeys     int
	shared      *redisrate.Limit
	unavailable string
}

type limitKey uint8

const (
	keyClient limitKey = iota
	keyHeader
	keyCookie
	keySubset
	keyApp
)

// absentKey is the hash of every request whose header or cookie a limit
// reads is absent: they share one bucket of the limit (per app).
const absentKey = 0x9e3779b97f4a7c15

// newLimit makes a limit's limiter and its answer's fixed parts.
func newLimit(key limitKey, name string, count int, period time.Duration, burst, maxKeys int, perApp, scg bool) *limit {
	l := &limit{key: key, name: name, perApp: perApp, count: count, period: period, burst: burst, scg: scg, maxKeys: maxKeys}
	l.lim = ratelimit.New(int64(period)/int64(count), burst, maxKeys)
	l.label = [...]string{"client", "header:", "cookie:", "subset", "app"}[key] + name
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[period]
	l.policy = fmt.Sprintf("%q;q=%d;w=%d", l.label, count, int(period/time.Second))
	l.reason = fmt.Sprintf("rate limit exceeded: %d/%s, burst %d, by %s\n", count, unit, burst, l.label)
	l.replen = strconv.FormatFloat(float64(count)/period.Seconds(), 'f', -1, 64)
	l.burstTx = strconv.Itoa(burst)
	return l
}

// clock is the limiters' time: nanoseconds on the monotonic clock.
var epoch = time.Now()

func monotonic() int64 { return int64(time.Since(epoch)) }

// allow decides a request of app against limits, in order: the first it
// is over answers it 429, and is returned for the answer's headers. It allocates nothing when the request passes.
func allow(limits []*limit, app string, req *Request, sub *Subset) (Answer, Limited) {
	now := monotonic()
	for _, l := range limits {
		var d ratelimit.Decision
		switch {
		case l.shared != nil:
			var down bool
			if d, down = l.shared.Allow(l.keyOf(app, req, sub), now); down {
				return Answer{Status: 503, Reason: l.unavailable}, Limited{}
			}
		case l.key == keyApp && !l.perApp:
			d = l.lim.Single(now)
		default:
			d = l.lim.Allow(l.keyOf(app, req, sub), now)
		}
		if !d.Allowed {
			return Answer{Status: 429, Reason: l.reason}, Limited{limit: l, retry: d.RetryAfter}
		}
	}
	return Answer{}, Limited{}
}

// keyOf hashes the key a request is counted under.
func (l *limit) keyOf(app string, req *Request, sub *Subset) uint64 {
	var h uint64
	switch l.key {
	case keyClient:
		a := req.client().As16()
		h = fnv64(string(a[:])) // the conversion of a local array does not escape
	case keyHeader:
		h = absentKey
		if v, ok := req.field(l.name); ok {
			h = fnv64(v)
		}
	case keyCookie:
		h = absentKey
		if field, ok := req.field("Cookie"); ok {
			if v, ok := cookie(field, l.name); ok {
				h = fnv64(v)
			}
		}
	case keySubset:
		if sub != nil {
			h = fnv64(sub.key)
		}
	}
	if l.perApp {
		h ^= fnv64(app)
	}
	return h
}

// Limited is the rate limit a request answered 429 is over, for the
// answer's headers (Route.Limit); its zero value is none.
type Limited struct {
	limit *limit
	retry int64       // nanoseconds until a request of its key would pass
	open  *appBreaker // an open circuit breaker's 503 instead (breaker_guard.go)
}

// Over reports whether the answer is a rate limit's 429.
func (l *Limited) Over() bool { return l.limit != nil }

// Label names the limit's key as the rules document wrote it ("client",
// "header:X-Api-Key"), for the access log.
func (l *Limited) Label() string { return l.limit.label }

// RetryAfter returns the whole seconds until a request of the key would
// pass, at least 1: Retry-After's value.
func (l *Limited) RetryAfter() int {
	return max(1, int((l.retry+int64(time.Second)-1)/int64(time.Second)))
}

// Headers gives the 429's header fields to set: Retry-After, the IETF
// RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers-09:
// `"client";q=10;w=1` and `"client";r=0;t=1`), and unless the document
// turned them off (scg_headers: false) Spring Cloud Gateway's
// X-RateLimit-Remaining, -Replenish-Rate and -Burst-Capacity.
func (l *Limited) Headers(set func(name, value string)) {
	if l.open != nil {
		l.openHeaders(set)
		return
	}
	retry := strconv.Itoa(l.RetryAfter())
	set("Retry-After", retry)
	set("RateLimit-Policy", l.limit.policy)
	set("RateLimit", strconv.Quote(l.limit.label)+";r=0;t="+retry)
	if l.limit.scg {
		set("X-RateLimit-Remaining", "0")
		set("X-RateLimit-Replenish-Rate", l.limit.replen)
		set("X-RateLimit-Burst-Capacity", l.limit.burstTx)
	}
}

// Limit decides a routed request against its app's rate limits (the
// traffic rules' limits, or their defaults): over one, it makes rt's
// Answer that limit's 429 (with rt.Limit for its headers) and returns
// false. A transport calls it once per request it serves, after Route
// and before an instance is picked: a request handed from one path to
// another (the loops to fasthttp) is decided by the path that serves it,
// so that it counts once. It allocates nothing, and takes no lock but
// the key's shard's.
//
// Past the limits, it decides the request against its app's circuit
// breaker (breaker_guard.go): while open, rt's Answer is the breaker's
// 503 (rt.Limit.Open, its headers in rt.Limit.Headers) and it returns
// false; let through, rt.Guard is the request's pass, which the
// transport ends once (traffic.Observed does). A breaker that is not
// closed takes its app's own lock.
func (r *Router) Limit(rt *Route, req *Request) bool {
	rules := r.rules.Load()
	if rules == nil || !rules.limited && !rules.guarded || rt.Answer.Status != 0 || rt.Other {
		return true
	}
	if rules.limited {
		if limits := rules.limitsOf(rt.App); len(limits) > 0 { // none: no clock read
			if rt.Answer, rt.Limit = allow(limits, rt.App, req, rt.Subset); rt.Answer.Status != 0 {
				rt.Instances = nil
				return false
			}
		}
	}
	return !rules.guarded || r.admit(rules, rt) // the breaker and retry budget, breaker_guard.go
}

// Limited reports whether the rules have rate limits, for a host that
// routes without Router.Limit and must refuse them rather than ignore
// them (Caddy's eureka upstream source).
func (r *Rules) Limited() bool { return r != nil && r.limited }
