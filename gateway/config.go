package gateway

import (
	"net/netip"
	"time"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/balancer"
)

// Defaults of Config.
const (
	DefaultRetries             = 1
	DefaultDialTimeout         = 3 * time.Second
	DefaultResponseTimeout     = 60 * time.Second
	DefaultMaxRequestBodySize  = 128 << 20
	DefaultMaxConnsPerInstance = 1024
	DefaultIdleConnTimeout     = 10 * time.Second
	DefaultSweepInterval       = 5 * time.Second
	DefaultFailDuration        = 30 * time.Second
	DefaultMaxFails            = 1
)

// Config configures a Gateway. Only Instances is required; the zero value
// of every other field is its default.
type Config struct {
	// Instances returns each application's UP instances: a
	// *registry.Store (in-process) or a *discovery.Client (a remote
	// registry). Required.
	Instances balancer.Instancer

	// Balancer chooses the instance for each request and keeps the passive
	// health of the instances. Default: a balancer over Instances with
	// per-app round-robin that skips an instance for FailDuration after
	// MaxFails consecutive failures, as eureka_gateway does.
	Balancer *balancer.Balancer
	// Policy chooses among the instances, when the gateway makes its own
	// Balancer. Default: per-app round-robin. With a
	// *balancer.LeastRequests the gateway counts each request as in
	// flight from its start to its response header (Balancer.Begin).
	Policy balancer.Policy
	// FailDuration is how long a failed instance is skipped, when the
	// gateway makes its own Balancer. Default 30s.
	FailDuration time.Duration
	// MaxFails is the number of consecutive failures after which an
	// instance is skipped, when the gateway makes its own Balancer.
	// Default 1.
	MaxFails int

	// Retries is how many other instances a failed request is tried on.
	// A request whose dial failed is retried whatever its method (it
	// never reached the instance); after a timeout or a broken connection
	// only an idempotent request (GET, HEAD, OPTIONS, TRACE, PUT, DELETE)
	// whose body is in memory (none, or at most 64 KiB) is. Default 1;
	// negative for none.
	Retries int
	// DialTimeout bounds the connection to an instance. Default 3s.
	DialTimeout time.Duration
	// ResponseTimeout is how long an instance may stay silent while the
	// gateway sends it a request or waits for its response: before the
	// response header and between two reads of its body, as nginx's
	// proxy_read_timeout. A request that times out before its response
	// started counts as a failure of the instance (504 if not retried).
	// Default 60s.
	ResponseTimeout time.Duration
	// MaxRequestBodySize is the largest request body forwarded; a larger
	// one is answered 413. Bodies are streamed whatever their size: this
	// is a policy, not a memory bound. Default 128 MiB; negative for no
	// limit.
	MaxRequestBodySize int64
	// MaxConnsPerInstance caps the connections to one instance; a request
	// that finds them all busy waits up to DialTimeout for one, then gets
	// 503. Default 1024. Server's event loops share it out: each loop may
	// open its part (at least one).
	MaxConnsPerInstance int
	// IdleConnTimeout closes a pooled connection to an instance that has
	// been idle this long. Keep it below the instances' own keep-alive
	// timeout. Default 10s.
	IdleConnTimeout time.Duration
	// SweepInterval is how often the pools are checked against the
	// registry, in addition to each change it announces (a
	// registry.Store's Subscribe or a discovery.Client's). Default 5s.
	SweepInterval time.Duration

	// TrustedProxies are the clients (proxies in front of the gateway)
	// whose X-Forwarded-For, -Proto, -Host and -Prefix are kept and added
	// to. Default: none, so every client's are replaced.
	TrustedProxies []netip.Prefix
	// RewriteHost sends the instance's host:port as the Host header
	// instead of the client's. Default false: Host passes through.
	RewriteHost bool

	// Other serves the requests that name no application (the path "/").
	// Default: 404.
	Other fasthttp.RequestHandler
	// Logger receives the failures of instances. Default: none.
	Logger *zap.Logger
}

// withDefaults returns cfg with its defaults filled in.
func (cfg Config) withDefaults() Config {
	if cfg.FailDuration <= 0 {
		cfg.FailDuration = DefaultFailDuration
	}
	if cfg.MaxFails <= 0 {
		cfg.MaxFails = DefaultMaxFails
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.ResponseTimeout <= 0 {
		cfg.ResponseTimeout = DefaultResponseTimeout
	}
	if cfg.MaxRequestBodySize == 0 {
		cfg.MaxRequestBodySize = DefaultMaxRequestBodySize
	}
	if cfg.MaxConnsPerInstance <= 0 {
		cfg.MaxConnsPerInstance = DefaultMaxConnsPerInstance
	}
	if cfg.IdleConnTimeout <= 0 {
		cfg.IdleConnTimeout = DefaultIdleConnTimeout
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = DefaultSweepInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Balancer == nil && cfg.Instances != nil {
		cfg.Balancer = balancer.New(cfg.Instances, balancer.Config{Policy: cfg.Policy, MaxFails: cfg.MaxFails, Cooldown: cfg.FailDuration})
	}
	return cfg
}
