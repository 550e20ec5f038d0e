package routing

import (
	"net/netip"
	"regexp"
	"sort"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/balancer"
)

// Rules are traffic rules, compiled: for each application, which subset
// of its instances (a balancer.Selector over their Eureka metadata) takes
// a request, by conditions on the request, weights and sticky keys. Parse
// them with ParseRules or LoadRules (the document is described there);
// give them to a Router with Config.Rules or Router.SetRules. A Rules is
// immutable and safe for concurrent use.
type Rules struct {
	source string               // where the document came from, for errors and the dashboard
	apps   map[string]*appRules // by app, upper case
	// defaults are the rate limits of every app without limits of its
	// own; limited says some app has limits.
	defaults []*limit
	limited  bool
	// policies are the circuit breakers and retry budgets
	// (rules_breaker_doc.go); guarded says some app has one.
	policies policies
	guarded  bool
}

// limitsOf returns the rate limits of app's requests.
func (r *Rules) limitsOf(app string) []*limit {
	if a := r.apps[app]; a != nil && a.ownLimits {
		return a.limits
	}
	return r.defaults
}

// Fallback says where a request goes when the subset its rule chose has
// no instance that can take it.
type Fallback int

const (
	// FallbackDefault sends it to the default subset (to any instance
	// when there is none). The default.
	FallbackDefault Fallback = iota
	// FallbackAny sends it to any of the application's instances.
	FallbackAny
	// FallbackNone answers it 503, naming the subset.
	FallbackNone
)

var fallbackNames = [...]string{"default", "any", "none"}

// String returns the fallback's name in a rules document: default, any
// or none.
func (f Fallback) String() string { return fallbackNames[f] }

// appRules are one application's rules.
type appRules struct {
	name     string  // as the document wrote it
	def      *Subset // nil: any instance
	rules    []*rule
	fallback Fallback
	subsets  []*Subset // every subset named, the default first
	doc      AppDoc
	// limits are the app's rate limits; ownLimits says it has a limits
	// key (limits: [] is none), which the defaults' then do not apply to.
	limits    []*limit
	ownLimits bool
	// policies are the app's own breaker and retry budget.
	policies policies
}

// A rule sends the requests that meet all its conditions to one of its
// targets.
type rule struct {
	conds  []cond
	to     []target // cumulative weights
	total  uint64
	sticky sticky
	turn   atomic.Uint64 // requests split by weight, for those without a sticky key
}

type target struct {
	sub  *Subset
	upto uint64 // the sum of the weights up to and including this one
}

// A Subset is a set of an application's instances that traffic rules
// send requests to: those its Selector selects. It counts the requests
// routed to it.
type Subset struct {
	// Selector selects the subset's instances.
	Selector balancer.Selector

	app     string            // upper case
	key     string            // the balancer's state key: "ORDERS version=2.1"
	region  string            // RegionKey's value: the instances are that region's
	match   balancer.Selector // Selector without RegionKey
	lists   balancer.Selected // its instances among the last routable list
	foreign bool              // named by a trusted proxy, not by a rule
}

// Label returns the subset's selector as text ("version=2.1"), as
// balancer.RouteHeader carries it.
func (s *Subset) Label() string { return s.Selector.String() }

type where uint8

const (
	inHeader where = iota
	inCookie
	inQuery
	inMethod
	inPath
	inClient
)

type op uint8

const (
	opEqual op = iota
	opIn
	opPresent
	opAbsent
	opRegex
	opPrefix
	opCIDR
)

// A cond is one condition of a rule.
type cond struct {
	where    where
	name     string // the header field (canonical), cookie or query parameter
	op       op
	value    string
	values   []string
	re       *regexp.Regexp
	prefixes []netip.Prefix
}

// sticky names where a request's sticky key is: a header field, a cookie
// or a query parameter.
type sticky struct {
	where where
	name  string
}

// Source returns where the rules were read from: a file's name, or what
// the host called the document.
func (r *Rules) Source() string {
	if r == nil {
		return ""
	}
	return r.source
}

// Apps returns the applications the rules are for, upper case, sorted.
func (r *Rules) Apps() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.apps))
	for app := range r.apps {
		out = append(out, app)
	}
	sort.Strings(out)
	return out
}

// App returns the rules of app (upper case) as the document gave them,
// and whether it has any.
func (r *Rules) App(app string) (AppDoc, bool) {
	if r == nil {
		return AppDoc{}, false
	}
	a, ok := r.apps[app]
	if !ok {
		return AppDoc{}, false
	}
	return a.doc, true
}

// Subsets returns the subsets of app's rules, its default first.
func (r *Rules) Subsets(app string) []*Subset {
	if r == nil || r.apps[app] == nil {
		return nil
	}
	return r.apps[app].subsets
}

// decide returns the subset a request for app goes to by app's rules:
// its first rule whose conditions hold, or the default (nil: any
// instance). path is the path the instance gets; target the client's.
func (a *appRules) decide(req *Request, target, path []byte) *Subset {
	for _, r := range a.rules {
		if r.holds(req, target, path) {
			return r.pick(req, target)
		}
	}
	return a.def
}

// holds reports whether every condition of r holds for the request.
func (r *rule) holds(req *Request, target, path []byte) bool {
	for i := range r.conds {
		if !r.conds[i].holds(req, target, path) {
			return false
		}
	}
	return true
}

func (c *cond) holds(req *Request, target, path []byte) bool {
	switch c.where {
	case inMethod:
		return req != nil && c.text(req.Method, true)
	case inPath:
		return len(path) >= len(c.value) && string(path[:len(c.value)]) == c.value
	case inClient:
		ip := req.client()
		if !ip.IsValid() {
			return false
		}
		for _, p := range c.prefixes {
			if p.Contains(ip) {
				return true
			}
		}
		return false
	case inQuery:
		raw, ok := queryParam(target, c.name)
		if !ok || c.op == opPresent || c.op == opAbsent {
			return c.text("", ok)
		}
		var buf [MaxRegexValue]byte
		if len(raw) > len(buf) {
			return false // too long to equal a value or to test a regex on
		}
		v := unescape(buf[:0], raw)
		switch c.op {
		case opRegex:
			return c.re.Match(v)
		case opEqual:
			return string(v) == c.value
		}
		for _, w := range c.values {
			if string(v) == w {
				return true
			}
		}
		return false
	}
	v, ok := c.value, false
	switch c.where {
	case inHeader:
		v, ok = req.field(c.name)
	case inCookie:
		var field string
		if field, ok = req.field("Cookie"); ok {
			v, ok = cookie(field, c.name)
		}
	}
	return c.text(v, ok)
}

// text tests a value, found or not.
func (c *cond) text(v string, found bool) bool {
	switch c.op {
	case opPresent:
		return found
	case opAbsent:
		return !found
	case opEqual:
		return found && v == c.value
	case opIn:
		if !found {
			return false
		}
		for _, w := range c.values {
			if v == w {
				return true
			}
		}
		return false
	case opRegex:
		return found && len(v) <= MaxRegexValue && c.re.MatchString(v)
	}
	return false
}

// pick returns the target a request that meets r's conditions goes to:
// by the hash of its sticky key when it has one, else in turn by weight.
func (r *rule) pick(req *Request, target []byte) *Subset {
	if len(r.to) == 1 {
		return r.to[0].sub
	}
	var point uint64
	if key, ok := r.stickyKey(req, target); ok {
		// The hash's top 32 bits scaled to the total: a key keeps its
		// point in [0, 1) of the weights whatever their scale.
		point = (fnv64(key) >> 32) * r.total >> 32
	} else {
		// A prime stride larger than any total visits every point of
		// [0, total) once in each run of total requests: the shares are
		// exact over every such run, and interleaved within it.
		point = (r.turn.Add(1) - 1) * weightStride % r.total
	}
	for _, t := range r.to {
		if point < t.upto {
			return t.sub
		}
	}
	return r.to[len(r.to)-1].sub
}

// weightStride is a prime above maxTotalWeight.
const weightStride = 1_000_003

// stickyKey returns a request's sticky key, if its rule has one and the
// request carries it.
func (r *rule) stickyKey(req *Request, target []byte) (string, bool) {
	switch {
	case r.sticky.name == "":
		return "", false
	case r.sticky.where == inHeader:
		return req.field(r.sticky.name)
	case r.sticky.where == inCookie:
		if field, ok := req.field("Cookie"); ok {
			return cookie(field, r.sticky.name)
		}
		return "", false
	}
	raw, ok := queryParam(target, r.sticky.name)
	return string(raw), ok && len(raw) > 0 // rare: a query key costs a copy
}

// fnv64 is FNV-1a.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	// FNV's top bits mix poorly for short keys that differ in their last
	// byte: finish with a 64-bit mixer (splitmix64's).
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
