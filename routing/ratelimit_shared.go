package routing

import (
	"fmt"
	"strconv"
	"time"

	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"

	"github.com/eurekagate/eurekagate/internal/ratelimit/redisrate"
)

// SharedLimitsConfig configures SharedLimits.
type SharedLimitsConfig struct {
	// URL is Redis's address, as go-redis's ParseURL reads it:
	// redis://[[user]:password@]host:port[/db], rediss:// for TLS, the
	// password, when there is one, never logged. Required.
	URL string
	// Logger tells once when Redis becomes unreachable and once when it
	// answers again. Default: none.
	Logger *zap.Logger
}

// SharedLimits are the rules' shared limits (shared: true): one limit
// for all the gateways that share a Redis, GCRA per key in Redis. No
// request waits on Redis: each gateway takes a lease of requests per key
// (one EVALSHA, several keys' in one pipeline) and serves them; a key
// whose lease runs low is refilled in the background. The cost in
// accuracy: each gateway may pass up to a lease more than Redis granted
// it (credit, while a key's refill is out), and a lease unused for a
// second is dropped; a lease is 10 ms of the rate, at least 1 and at
// most a quarter of the burst or 1,000.
//
// Redis unreachable: a key's lease left is used, then a limit fails open
// (its requests pass, as Spring Cloud Gateway's) or, with
// redis_failure: closed, answers 503. Redis is tried again every 500 ms,
// and used again as soon as it answers. Give them to the rules' parse
// (RulesLimits.Shared); Close when no gateway uses them any more.
// The zero SharedLimits only checks documents (Caddy's adapt, before its
// app's Redis is known): rules parsed with it are not to route by, their
// shared limits have no leases.
type SharedLimits struct {
	store *redisrate.Store
}

// NewSharedLimits makes the client of cfg.URL and starts its goroutines;
// Redis is dialled at the first request of a shared limit.
func NewSharedLimits(cfg SharedLimitsConfig) (*SharedLimits, error) {
	s, err := redisrate.New(redisrate.Config{URL: cfg.URL, Logger: cfg.Logger, Now: monotonic})
	if err != nil {
		return nil, err
	}
	return &SharedLimits{store: s}, nil
}

// Close stops the goroutines, waits for them and closes the client.
func (s *SharedLimits) Close() error { return s.store.Close() }

// SharedHealth is Redis's state as the shared limits see it.
type SharedHealth struct {
	// Up says the last call to Redis answered.
	Up bool
	// Errors counts the calls to Redis that failed.
	Errors uint64
	// LastError is the last failure while Redis is down ("" when up),
	// without the URL's password.
	LastError string
	// Since is when Redis was last found down or up again.
	Since time.Time
}

// Component is h as a health endpoint's component: UP, or DOWN with
// the last error and since when; the failed calls counted.
func (h SharedHealth) Component() (status string, details map[string]any) {
	details = map[string]any{"errors": h.Errors}
	if h.Up {
		return "UP", details
	}
	details["error"], details["since"] = h.LastError, h.Since.UTC().Format(time.RFC3339)
	return "DOWN", details
}

// Health returns Redis's state.
func (s *SharedLimits) Health() SharedHealth {
	msg, since := s.store.State()
	return SharedHealth{Up: s.store.Up(), Errors: s.store.Errors(), LastError: msg, Since: since}
}

// The values of redis_failure.
const (
	failureUnset int8 = iota
	failureOpen
	failureClosed
)

// redisFailure reads redis_failure: open or closed.
func (p *parser) redisFailure(n *yaml.Node, at string) (int8, error) {
	v, err := p.scalar(n, at)
	switch {
	case err != nil:
		return 0, err
	case v == "open":
		return failureOpen, nil
	case v == "closed":
		return failureClosed, nil
	}
	return 0, p.fail(n, at, fmt.Sprintf("%q is not open or closed", p.lim.echo(v)))
}

// setShared makes the leases of the document's shared limits: the Redis
// keys of an app's limit are named after the app, the limit's key and
// its rate, so that every gateway with the same limit counts in the same
// keys, and a reloaded document keeps counting where the last left off.
func (p *parser) setShared(rules *Rules) error {
	found := false
	each := func(app string, ls []*limit) {
		for _, l := range ls {
			if !l.sharedDoc {
				continue
			}
			found = true
			if p.lim.Shared.store == nil {
				continue // a check only
			}
			closed := l.failure == failureClosed || l.failure == failureUnset && p.failure == failureClosed
			prefix := "eurekagate:ratelimit:" + app + ":" + l.label + ":" + strconv.Itoa(l.count) + "/" + l.period.String() + ":" + strconv.Itoa(l.burst) + ":"
			l.shared = p.lim.Shared.store.NewLimit(prefix, int64(l.period)/int64(l.count), l.burst, l.maxKeys, closed)
			l.unavailable = "rate limit store (Redis) unreachable: the limit by " + l.label + " fails closed\n"
		}
	}
	each("defaults", rules.defaults)
	for name, a := range rules.apps {
		each(name, a.limits)
	}
	if p.failureAt != nil && !found {
		return p.fail(p.failureAt, "defaults.redis_failure", "applies to shared limits (shared: true), and the document has none")
	}
	return nil
}

// noRedis is the refusal of shared: true without a Redis.
const noRedis = "a shared limit needs the gateway's Redis: cmd/eureka's -gateway-redis redis://HOST:PORT, Caddy's redis in the eureka app (global options), or RulesLimits.Shared in Go; none is set"
