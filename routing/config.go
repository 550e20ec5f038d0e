package routing

import (
	"errors"
	"net/netip"
	"time"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/internal/settings"
)

// The defaults of Config: one per setting, the same for Caddy's
// eureka_gateway, the fasthttp gateway, cmd/eureka and the Go API.
const (
	// DefaultRetries is how many other instances a failed request may go
	// to.
	DefaultRetries = 1
	// DefaultDialTimeout bounds connecting to an instance, as Caddy's
	// reverse_proxy.
	DefaultDialTimeout = 3 * time.Second
	// DefaultResponseHeaderTimeout bounds the wait for an instance's
	// response header once the request is sent. A timeout takes the
	// instance out of rotation, so that a hung instance leaves it within
	// seconds, at the price of answering 504 to a request slower than
	// this: set it above the slowest normal response behind the gateway.
	DefaultResponseHeaderTimeout = 5 * time.Second
	// DefaultReadTimeout is the longest an instance may stay silent while
	// its response body streams (or while the request is sent to it), as
	// nginx's proxy_read_timeout.
	DefaultReadTimeout = 60 * time.Second
	// DefaultFailDuration is how long a failed instance is skipped.
	DefaultFailDuration = 30 * time.Second
	// DefaultMaxFails is the number of consecutive failures that have an
	// instance skipped; a timeout has it skipped at once.
	DefaultMaxFails = 1
)

// MaxReplayBody is the largest request body a gateway keeps in memory so
// that the request can be sent to another instance after a failure; a
// larger one streams, and its request is retried only when its instance
// never got it.
const MaxReplayBody = 64 << 10

// Config configures a Router. Only Instances is required; the zero value
// of every other field is its default.
type Config struct {
	// Instances returns each application's UP instances: a
	// *registry.Store (in-process) or a *discovery.Client (a remote
	// registry). When it also has AllInstances (both have), a request for
	// an application with instances but none UP is told so. Required.
	Instances balancer.Instancer
	// Balancer picks the instance for each request and keeps the passive
	// health of the instances. Default: a balancer over Instances with
	// Policy that skips an instance for FailDuration after MaxFails
	// consecutive failures, and at once after a timeout.
	Balancer *balancer.Balancer
	// Policy chooses among the instances, when the Router makes its own
	// Balancer. Default: per-app round-robin.
	Policy balancer.Policy
	// FailDuration is how long a failed instance is skipped, when the
	// Router makes its own Balancer. Default 30s.
	FailDuration time.Duration
	// MaxFails is the number of consecutive failures after which an
	// instance is skipped, when the Router makes its own Balancer.
	// Default 1.
	MaxFails int
	// Health runs active health checks: an application whose UP
	// instances all fail theirs is answered 503, and those failing are
	// not routed to. Default: the Balancer's Checker, if it has one.
	Health *balancer.Checker

	// Retries is how many other instances a failed request may go to.
	// Default 1; negative for none.
	Retries int
	// DialTimeout bounds connecting to an instance. Default 3s.
	DialTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for an instance's response
	// header once the request is sent; negative for none (a hung
	// instance is then never found out). Default 5s.
	ResponseHeaderTimeout time.Duration
	// ReadTimeout is the longest an instance may stay silent while its
	// response body streams, or while the request is sent to it. Default
	// 60s.
	ReadTimeout time.Duration

	// Rules are the traffic rules in force at the start (see ParseRules;
	// Router.SetRules changes them). Default: none, a request may go to
	// any instance of its app.
	Rules *Rules
	// TrustedProxies are the clients (proxies in front of the gateway)
	// whose X-Forwarded-For, -Proto, -Host and -Prefix are kept and added
	// to, and whose ClientClaims pass. Default: none.
	TrustedProxies []netip.Prefix

	// FailoverRegions are the remote regions, in order, that take an
	// app's requests when its local region has no instance that can take
	// them (none UP, healthy and with a port): the first of them that has
	// one gets the request, and the local region gets them back as soon
	// as it has one again. Instances must then also answer for other
	// regions (RegionInstancer: a *registry.Store with remote regions, a
	// *discovery.Client that fetches them). Default: none, the local
	// region only.
	FailoverRegions []string

	// OnBreaker, when set, is told each move of an app's circuit breaker
	// (the traffic rules' breaker), once: the gateways log it and count
	// it. subset is the label of the subset whose breaker moved (a
	// breaker with per_subset), "" for the app's own. It must not block.
	OnBreaker func(app, subset string, to BreakerState)
	// OnRetryDenied, when set, is told each retry an app's retry budget
	// kept from being made. It must not block.
	OnRetryDenied func(app string)
	// Clock is the circuit breakers' time (tests move it). Default: the
	// monotonic clock.
	Clock interface{ Now() time.Time }
}

// WithDefaults returns cfg with the defaults of its settings filled in:
// all but Instances, Balancer and Health, which New fills in.
func (cfg Config) WithDefaults() Config {
	if cfg.Retries == 0 {
		cfg.Retries = DefaultRetries // negative stays: none
	}
	settings.Default(&cfg.FailDuration, DefaultFailDuration)
	settings.Default(&cfg.MaxFails, DefaultMaxFails)
	settings.Default(&cfg.DialTimeout, DefaultDialTimeout)
	if cfg.ResponseHeaderTimeout == 0 {
		cfg.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	}
	settings.Default(&cfg.ReadTimeout, DefaultReadTimeout)
	return cfg
}

// complete returns cfg with all its defaults filled in, the Balancer and
// Health among them.
func (cfg Config) complete() (Config, error) {
	if cfg.Instances == nil {
		return cfg, errors.New("routing: Config.Instances is required")
	}
	cfg = cfg.WithDefaults()
	if cfg.Balancer == nil {
		cfg.Balancer = balancer.New(cfg.Instances, balancer.Config{Policy: cfg.Policy, MaxFails: cfg.MaxFails, Cooldown: cfg.FailDuration})
	}
	if cfg.Health == nil {
		cfg.Health = cfg.Balancer.Checker()
	}
	return cfg, nil
}
