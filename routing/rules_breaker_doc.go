package routing

import (
	"fmt"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// The bounds of a document's breakers and retry budgets.
const (
	// maxPolicyCount bounds min_requests, consecutive_failures,
	// half_open_requests and min_concurrency.
	maxPolicyCount = 1_000_000
	// maxPolicyDuration bounds slow, window and open.
	maxPolicyDuration = time.Hour
)

// policies are the circuit breaker and retry budget of an app, or of
// defaults; own says the key was given (off: none, the defaults' too).
type policies struct {
	breaker    *breakerConfig
	budget     *budgetConfig
	ownBreaker bool
	ownBudget  bool
}

// budgetConfig is a retry budget's settings, defaults filled in.
type budgetConfig struct {
	ratio float64
	min   int
}

// policiesOf returns app's breaker and retry budget: its own, else the
// defaults'.
func (r *Rules) policiesOf(app string) (*breakerConfig, *budgetConfig) {
	br, bu := r.policies.breaker, r.policies.budget
	if a := r.apps[app]; a != nil {
		if a.policies.ownBreaker {
			br = a.policies.breaker
		}
		if a.policies.ownBudget {
			bu = a.policies.budget
		}
	}
	return br, bu
}

// Guarded reports whether the rules have circuit breakers or retry
// budgets, for a host that routes without Router.Limit and must refuse
// them rather than ignore them (Caddy's eureka upstream source).
func (r *Rules) Guarded() bool { return r != nil && r.guarded }

// markGuarded sets rules.guarded once the document is read.
func markGuarded(rules *Rules) {
	on := func(p policies) bool { return p.breaker != nil || p.budget != nil }
	rules.guarded = on(rules.policies)
	for _, a := range rules.apps {
		rules.guarded = rules.guarded || on(a.policies)
	}
}

// policyFields adds the breaker and retry_budget keys to the fields of an
// app or of defaults, read into pol.
func (p *parser) policyFields(pol *policies, fields map[string]func(*yaml.Node, string) error) map[string]func(*yaml.Node, string) error {
	fields["breaker"] = func(n *yaml.Node, at string) (err error) {
		pol.ownBreaker = true
		if p.off(n) {
			return nil
		}
		pol.breaker, err = p.breaker(n, at)
		return err
	}
	fields["retry_budget"] = func(n *yaml.Node, at string) (err error) {
		pol.ownBudget = true
		if p.off(n) {
			return nil
		}
		pol.budget, err = p.budget(n, at)
		return err
	}
	return fields
}

// off reports whether n is "off": no policy of the kind, not even the
// defaults'.
func (p *parser) off(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Value == "off" }

// breaker reads a circuit breaker: {error_ratio, slow, slow_ratio,
// consecutive_failures, min_requests, window, open, half_open_requests,
// per_subset}. per_subset (default false: one breaker for the whole app)
// is named after the rules' subsets, the word the document already uses
// for what a rule, a weight or a sticky key routes a request to.
func (p *parser) breaker(n *yaml.Node, at string) (*breakerConfig, error) {
	c := breakerConfig{
		errorRatio: DefaultBreakerErrorRatio, slowRatio: DefaultBreakerSlowRatio,
		minRequests: DefaultBreakerMinRequests, window: DefaultBreakerWindow,
		open: DefaultBreakerOpen, halfOpen: DefaultBreakerHalfOpenRequests,
	}
	var slowRatio *yaml.Node
	err := p.mapping(n, at, map[string]func(*yaml.Node, string) error{
		"error_ratio": func(n *yaml.Node, at string) (err error) { c.errorRatio, err = p.ratio(n, at); return err },
		"slow_ratio": func(n *yaml.Node, at string) (err error) {
			slowRatio = n
			c.slowRatio, err = p.ratio(n, at)
			return err
		},
		"slow":   func(n *yaml.Node, at string) (err error) { c.slow, err = p.duration(n, at); return err },
		"window": func(n *yaml.Node, at string) (err error) { c.window, err = p.duration(n, at); return err },
		"open":   func(n *yaml.Node, at string) (err error) { c.open, err = p.duration(n, at); return err },
		"consecutive_failures": func(n *yaml.Node, at string) (err error) {
			c.consecutive, err = p.whole(n, at, maxPolicyCount)
			return err
		},
		"min_requests": func(n *yaml.Node, at string) (err error) {
			c.minRequests, err = p.whole(n, at, maxPolicyCount)
			return err
		},
		"half_open_requests": func(n *yaml.Node, at string) (err error) {
			c.halfOpen, err = p.whole(n, at, maxPolicyCount)
			return err
		},
		"per_subset": func(n *yaml.Node, at string) (err error) { c.perSubset, err = p.boolean(n, at); return err },
	})
	if err == nil && slowRatio != nil && c.slow == 0 {
		err = p.fail(slowRatio, p.join(at, "slow_ratio"), "needs slow, the duration from which a request is slow")
	}
	return &c, err
}

// budget reads a retry budget: {ratio, min_concurrency}.
func (p *parser) budget(n *yaml.Node, at string) (*budgetConfig, error) {
	c := budgetConfig{ratio: DefaultRetryBudgetRatio, min: DefaultRetryBudgetMinConcurrency}
	err := p.mapping(n, at, map[string]func(*yaml.Node, string) error{
		"ratio": func(n *yaml.Node, at string) (err error) { c.ratio, err = p.ratio(n, at); return err },
		"min_concurrency": func(n *yaml.Node, at string) (err error) {
			c.min, err = p.wholeIn(n, at, 0, maxPolicyCount)
			return err
		},
	})
	return &c, err
}

// ratio reads a number in (0, 1].
func (p *parser) ratio(n *yaml.Node, at string) (float64, error) {
	v, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || err != nil || !(v > 0 && v <= 1) {
		return 0, p.fail(n, at, fmt.Sprintf("%q is not a ratio above 0 and at most 1", p.lim.echo(n.Value)))
	}
	return v, nil
}

// duration reads a duration ("2s", "500ms") above 0 and at most
// maxPolicyDuration.
func (p *parser) duration(n *yaml.Node, at string) (time.Duration, error) {
	d, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || d <= 0 || d > maxPolicyDuration {
		return 0, p.fail(n, at, fmt.Sprintf("%q is not a duration above 0 and at most %v (500ms, 2s, 1m)", p.lim.echo(n.Value), maxPolicyDuration))
	}
	return d, nil
}
