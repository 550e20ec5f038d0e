package gateway

import (
	"crypto/tls"
	"fmt"
	"io"
	"time"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/internal/settings"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// Defaults of Config. Those of routing, retries and passive health are
// package routing's (routing.DefaultRetries, routing.DefaultDialTimeout,
// ...), which Caddy's eureka_gateway shares.
const (
	DefaultMaxRequestBodySize  = 128 << 20
	DefaultMaxConnsPerInstance = 1024
	DefaultIdleConnTimeout     = 10 * time.Second
	DefaultSweepInterval       = 5 * time.Second
)

// Config configures a Gateway. Only Routing.Instances is required; the
// zero value of every other field is its default.
type Config struct {
	// Routing is where requests go and what happens when an instance
	// fails one: the instances (a *registry.Store in-process, or a
	// *discovery.Client over a remote registry; required), the balancer
	// and its passive health, active health checks, retries, the dial and
	// response timeouts and the trusted proxies, with the defaults Caddy's
	// eureka_gateway has too (package routing). The gateway waits
	// Routing.ResponseHeaderTimeout for an instance's response header once
	// the request is sent, and Routing.ReadTimeout for each read of its
	// body and each write of the request to it. With a
	// *balancer.LeastRequests policy the gateway counts each request as in
	// flight from its start to its response header (Balancer.Begin).
	Routing routing.Config

	// MaxRequestBodySize is the largest request body forwarded; a larger
	// one is answered 413. As after any answer given before the whole
	// body came (linger.go), the rest is then dropped: by its
	// Content-Length after the answer when it is 256 KiB or less and
	// neither side closes the connection, which then carries the
	// client's next request; chunked, or when a side closes, if it comes
	// within 20 ms; otherwise the connection closes lingering, reading
	// and dropping what the client still sends until it closes its side,
	// pauses 5 s or 30 s have passed (nginx's lingering_close). Bodies
	// are streamed whatever their size: this is a policy, not a memory
	// bound. Default 128 MiB; negative for no limit.
	MaxRequestBodySize int64
	// MaxConnsPerInstance caps the connections to one instance; a request
	// that finds them all busy waits up to Routing.DialTimeout for one, then gets
	// 503. Default 1024. Server's event loops share it out: each loop may
	// open its part (at least one).
	MaxConnsPerInstance int
	// IdleConnTimeout closes a pooled connection to an instance that has
	// been idle this long. Keep it below the instances' own keep-alive
	// timeout. Default 10s.
	IdleConnTimeout time.Duration
	// SweepInterval is how often the pools and the traffic counters are
	// checked against the registry, in addition to each change it
	// announces (Routing.Instances' Changed, notify.Notifier: a
	// registry.Store's or a discovery.Client's):
	// the counters of an app or an instance gone for traffic.Grace are
	// dropped then, with their series. Default 5s.
	SweepInterval time.Duration
	// Now is the clock of the sweeps (traffic.Recorder.Sweep). Default
	// time.Now.
	Now func() time.Time

	// TLS is the configuration of the connections to instances that
	// enable only their secure port, which are reached over TLS on it:
	// set RootCAs to the authority that signs their certificates (as
	// Caddy's tls_trusted_ca_certs; cmd/eureka's -gateway-trusted-ca).
	// The server name is the instance's host unless set. Default: the
	// system's roots.
	TLS *tls.Config
	// RewriteHost sends the instance's host:port as the Host header
	// instead of the client's. Default false: Host passes through.
	RewriteHost bool

	// Other serves the requests that name no application (the path "/").
	// Default: 404.
	Other fasthttp.RequestHandler
	// Logger receives the failures of instances. Default: none.
	Logger *zap.Logger

	// Traffic records the requests per app (for /metrics and the
	// dashboard): a Recorder shared with them. Default: a Recorder of
	// the gateway's own (Gateway.Traffic), unless DisableTraffic.
	Traffic *traffic.Recorder
	// DisableTraffic records no traffic.
	DisableTraffic bool
	// DisableRequestID leaves a request's X-Request-Id as it came (none,
	// or the client's). Default false: the instance gets exactly one,
	// the client's when it comes from a trusted proxy
	// (Routing.TrustedProxies) or is 20 to 200 characters of
	// [A-Za-z0-9+=/-] (routing.KeepRequestID), else a new one (32 hex
	// digits), which the access log records too.
	DisableRequestID bool

	// AccessLog, when set, receives the access log: one JSON line per
	// request, with the fields of Caddy's access log (ts, request,
	// status, size, duration) and the gateway's (app, instance, subset,
	// retries, request_id), as docs/gateway.md describes. The requests
	// do not wait for it: they queue their lines in memory, and a
	// goroutine of the gateway writes them in batches, one Write at a
	// time, each line within a second; Close writes the last lines (and
	// waits for the Write in progress). A line that finds AccessLogBuffer
	// bytes queued (the Writer is behind) is dropped and counted
	// (Gateway.AccessLogDropped). Closing the Writer is the caller's,
	// after Close. Default: none.
	AccessLog io.Writer
	// AccessLogBuffer is how many bytes of lines may wait for AccessLog.
	// Default DefaultAccessLogBuffer (4 MiB, some 10,000 lines).
	AccessLogBuffer int
}

// withDefaults returns cfg with its defaults filled in, and the router
// that decides where its requests go.
func (cfg Config) withDefaults() (Config, *routing.Router, error) {
	r, err := routing.New(cfg.Routing)
	if err != nil {
		return cfg, nil, fmt.Errorf("gateway: %v", err)
	}
	cfg.Routing = r.Config()
	if cfg.MaxRequestBodySize == 0 {
		cfg.MaxRequestBodySize = DefaultMaxRequestBodySize
	}
	settings.Default(&cfg.MaxConnsPerInstance, DefaultMaxConnsPerInstance)
	settings.Default(&cfg.IdleConnTimeout, DefaultIdleConnTimeout)
	settings.Default(&cfg.SweepInterval, DefaultSweepInterval)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	settings.Default(&cfg.AccessLogBuffer, DefaultAccessLogBuffer)
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return cfg, r, nil
}
