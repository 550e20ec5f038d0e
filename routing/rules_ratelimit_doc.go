package routing

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/eurekagate/eurekagate/internal/ratelimit"
)

// The bounds of a document's rate limits.
const (
	// maxLimits is the most rate limits of one app (or of defaults): a
	// request is decided by each in turn.
	maxLimits = 8
	// maxLimitKeys is the most keys all the limits of a document may hold
	// together (their max_keys added up; some 32 bytes a key): 1,000,000.
	maxLimitKeys = 1_000_000
	// maxLimitCount is the largest N of a rate N/s, N/m or N/h, and the
	// largest burst.
	maxLimitCount = 1_000_000_000
	// maxBurstFill bounds the time a limit's burst takes to fill again at
	// its rate (burst × period / N): a year. Past it the limiter's
	// arithmetic in nanoseconds would overflow, and refuse every request.
	maxBurstFill = 365 * 24 * time.Hour
)

// defaults reads the document's defaults: the limits of every app
// without a limits key of its own, and whether 429s carry Spring Cloud
// Gateway's headers; the breaker and retry budget of every app without
// its own (rules_breaker_doc.go).
func (p *parser) defaults(n *yaml.Node, at string, rules *Rules) error {
	return p.mapping(n, at, p.policyFields(&rules.policies, map[string]func(*yaml.Node, string) error{
		"limits": func(n *yaml.Node, at string) error {
			var err error
			rules.defaults, err = p.limits(n, at, true)
			return err
		},
		"redis_failure": func(n *yaml.Node, at string) (err error) {
			p.failure, err = p.redisFailure(n, at)
			p.failureAt = n
			return err
		},
		"scg_headers": func(n *yaml.Node, at string) error {
			on, err := p.boolean(n, at)
			p.noSCG = !on
			return err
		},
	}))
}

// limits reads a list of rate limits; perApp for the defaults', whose
// keys are each app's apart.
func (p *parser) limits(n *yaml.Node, at string, perApp bool) ([]*limit, error) {
	if n.Kind == yaml.SequenceNode && len(n.Content) > maxLimits {
		return nil, p.fail(n, at, fmt.Sprintf("has more than %d limits", maxLimits))
	}
	out := []*limit{}
	err := p.seq(n, at, func(v *yaml.Node, at string) error {
		if p.rules++; p.rules > p.lim.MaxRules {
			return p.fail(v, at, fmt.Sprintf("is a limit past the limit of %d rules (limits count as rules) in a document", p.lim.MaxRules))
		}
		l, err := p.limit(v, at, perApp)
		out = append(out, l)
		return err
	})
	return out, err
}

// limit reads one rate limit: {key, rate, burst, max_keys}.
func (p *parser) limit(n *yaml.Node, at string, perApp bool) (*limit, error) {
	var key limitKey
	var name, rate string
	var period time.Duration
	count, burst, maxKeys := 0, 0, ratelimit.DefaultMaxKeys
	keyed, shared, failure, failureAt := false, false, failureUnset, (*yaml.Node)(nil)
	err := p.mapping(n, at, map[string]func(*yaml.Node, string) error{
		"key": func(n *yaml.Node, at string) error {
			v, err := p.scalar(n, at)
			if err != nil {
				return err
			}
			keyed = true
			kind, arg, _ := strings.Cut(v, ":")
			switch {
			case v == "client":
				key = keyClient
			case v == "subset":
				key = keySubset
			case v == "app":
				key = keyApp
			case kind == "header":
				if arg == "" {
					return p.fail(n, at, "names no header")
				}
				canon, wrong := ruleHeader(arg)
				if wrong != "" {
					return p.fail(n, at, fmt.Sprintf("%q %s", p.lim.echo(arg), wrong))
				}
				key, name = keyHeader, canon
			case kind == "cookie":
				for i := 0; i < len(arg); i++ {
					if !isToken(arg[i]) {
						return p.fail(n, at, fmt.Sprintf("%q is not a cookie name (an HTTP token)", p.lim.echo(arg)))
					}
				}
				if arg == "" {
					return p.fail(n, at, "names no cookie")
				}
				key, name = keyCookie, arg
			default:
				return p.fail(n, at, fmt.Sprintf("%q is not client, header:NAME, cookie:NAME, subset or app", p.lim.echo(v)))
			}
			return nil
		},
		"rate": func(n *yaml.Node, at string) error {
			v, err := p.scalar(n, at)
			if err != nil {
				return err
			}
			rate = v
			num, unit, _ := strings.Cut(v, "/")
			c, err := strconv.Atoi(num)
			period = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[unit]
			if err != nil || c < 1 || c > maxLimitCount || period == 0 {
				return p.fail(n, at, fmt.Sprintf("%q is not N/s, N/m or N/h with N a whole number from 1 to %d", p.lim.echo(v), maxLimitCount))
			}
			count = c
			return nil
		},
		"burst": func(n *yaml.Node, at string) (err error) {
			burst, err = p.whole(n, at, maxLimitCount)
			return err
		},
		"max_keys": func(n *yaml.Node, at string) (err error) {
			maxKeys, err = p.whole(n, at, maxLimitKeys)
			return err
		},
		"shared": func(n *yaml.Node, at string) (err error) {
			if shared, err = p.boolean(n, at); err == nil && shared && p.lim.Shared == nil {
				return p.fail(n, at, noRedis)
			}
			return err
		},
		"redis_failure": func(n *yaml.Node, at string) (err error) {
			failure, err = p.redisFailure(n, at)
			failureAt = n
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	switch {
	case !keyed:
		return nil, p.fail(n, at, "a limit needs key: client, header:NAME, cookie:NAME, subset or app")
	case rate == "":
		return nil, p.fail(n, at, "a limit needs rate: N/s, N/m or N/h")
	case int64(period)/int64(count) < 1:
		return nil, p.fail(n, at, fmt.Sprintf("rate %s is more than one request a nanosecond", rate))
	}
	if failureAt != nil && !shared {
		return nil, p.fail(failureAt, p.join(at, "redis_failure"), "applies to a shared limit only (shared: true)")
	}
	if burst == 0 {
		burst = count
	} else if int64(burst) > int64(maxBurstFill)/(int64(period)/int64(count)) {
		return nil, p.fail(n, at, fmt.Sprintf("burst %d at %s takes more than a year to fill again", burst, rate))
	}
	if key != keyApp || perApp {
		if p.limitKeys += maxKeys; p.limitKeys > maxLimitKeys {
			return nil, p.fail(n, at, fmt.Sprintf("the limits' max_keys add up to %d, past the limit of %d keys in a document", p.limitKeys, maxLimitKeys))
		}
	}
	l := newLimit(key, name, count, period, burst, maxKeys, perApp, true)
	l.sharedDoc, l.failure = shared, failure
	return l, nil
}

// setSCG applies the document's scg_headers to its limits once it is read.
func (p *parser) setSCG(rules *Rules) {
	each := func(ls []*limit) {
		for _, l := range ls {
			l.scg = !p.noSCG
			rules.limited = true
		}
	}
	each(rules.defaults)
	for _, a := range rules.apps {
		each(a.limits)
	}
}

// whole reads a whole number from 1 to most.
func (p *parser) whole(n *yaml.Node, at string, most int) (int, error) {
	return p.wholeIn(n, at, 1, most)
}

// wholeIn reads a whole number from least to most.
func (p *parser) wholeIn(n *yaml.Node, at string, least, most int) (int, error) {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || v < least || v > most {
		return 0, p.fail(n, at, fmt.Sprintf("%q is not a whole number from %d to %d", p.lim.echo(n.Value), least, most))
	}
	return v, nil
}

// boolean reads true or false.
func (p *parser) boolean(n *yaml.Node, at string) (bool, error) {
	var b bool
	if err := n.Decode(&b); err != nil || n.Kind != yaml.ScalarNode {
		return false, p.fail(n, at, "is not true or false")
	}
	return b, nil
}
