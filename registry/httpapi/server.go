package httpapi

import (
	"cmp"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"github.com/eurekagate/eurekagate/internal/fastserve"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
	"go.uber.org/zap"
)

// ServerConfig configures the standalone fasthttp server.
type ServerConfig struct {
	// Addr is the listen address. Default ":8761", Eureka's port, so
	// clients' default service URL http://localhost:8761/eureka/ works.
	Addr string
	// ReadTimeout bounds reading one request, from its first byte (on a
	// new connection, from the connection's opening) to its last; a
	// request still incomplete then is answered 408 and its connection
	// closed. A connection on which nothing arrives in that time is closed
	// without an answer. WriteTimeout bounds writing one answer. Default
	// 30s each.
	ReadTimeout, WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that waits that long for
	// its next request, without an answer (Eureka clients open another).
	// Default 90s.
	IdleTimeout time.Duration
	// MaxHeaderBytes limits a request's line and headers together; larger
	// requests are answered 431. Default DefaultMaxHeaderBytes (64 KiB).
	// fasthttp reads them into a buffer of that size, which a connection
	// holds while a request is arriving (not while it is idle or its
	// request is being answered, as a held watch is): a client that sends
	// part of a request and stalls holds it until ReadTimeout. net/http's
	// limit is 1 MiB, but it grows its buffer with what arrives; set 1<<20
	// for the same limit, at 1 MiB per request on its way in.
	MaxHeaderBytes int
	// Logger receives fasthttp's messages about broken connections.
	// Default: discarded, since they report client errors.
	Logger fasthttp.Logger
	// Log receives the server's own troubles: failures to accept a
	// connection (out of file descriptors, say), after which it waits and
	// accepts again (5 ms, doubling to 500 ms), counting each in /metrics as
	// eureka_accept_errors_total. Default: none.
	Log *zap.Logger
	// TLS, if set, makes the server serve HTTPS: Start wraps the listener
	// with it. TLSFiles makes one from PEM files that it reloads when
	// they change; with a client CA it requires client certificates
	// (mutual TLS), which AuthConfig.PeerCertNames can take as the peer's
	// identity. Default: nil, plain HTTP.
	TLS *tls.Config
	// Other serves the requests that are not under the API's prefixes (a
	// dashboard, /metrics). Default: 404.
	Other http.Handler
	// AllowedHosts are the Host headers (HOST[:PORT]; a host without a
	// port matches any port) that a server listening on loopback only,
	// whose API has no credentials, answers besides loopback names and
	// addresses and its own names; other hosts get 403 (HostGuard, against
	// DNS rebinding). A server that listens on other addresses, or has
	// credentials, answers every Host, and logs that AllowedHosts has no
	// effect. Default: none.
	AllowedHosts []string
}

// DefaultMaxHeaderBytes is the default limit of a request's line and
// headers on the standalone server: 64 KiB, 16 times fasthttp's default
// and 4 times Caddy's (long metadata queries and a browser's cookies for
// localhost fit), while a thousand requests stalled half-way hold 64 MB.
const DefaultMaxHeaderBytes = 64 << 10

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// Server is the standalone registry server: the API served by fasthttp.
type Server struct {
	cfg ServerConfig
	api *API
	srv *fasthttp.Server
	run fastserve.Runner
	// hosts, when set (by Start, before serving), refuses the Host
	// headers it does not allow.
	hosts *HostGuard
}

// NewServer returns a server for api. It does not listen until Start.
func NewServer(api *API, cfg ServerConfig) *Server {
	if cfg.Addr == "" {
		cfg.Addr = ":8761"
	}
	cfg.ReadTimeout = cmp.Or(cfg.ReadTimeout, 30*time.Second)
	cfg.WriteTimeout = cmp.Or(cfg.WriteTimeout, 30*time.Second)
	cfg.IdleTimeout = cmp.Or(cfg.IdleTimeout, 90*time.Second)
	cfg.MaxHeaderBytes = cmp.Or(cfg.MaxHeaderBytes, DefaultMaxHeaderBytes)
	if cfg.Logger == nil {
		cfg.Logger = discardLogger{}
	}
	s := &Server{
		cfg: cfg,
		api: api,
		run: fastserve.Runner{Name: "registry", Log: cfg.Log},
		srv: &fasthttp.Server{
			Logger:             cfg.Logger,
			ErrorHandler:       FastHTTPErrorHandler(api.MaxBodyBytes()),
			MaxRequestBodySize: int(max(api.maxBody, api.maxBatch)),
			// Each endpoint's own limit, read from the path before the body.
			HeaderReceived: func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
				return fasthttp.RequestConfig{MaxRequestBodySize: int(api.BodyLimit(transient(h.RequestURI())))}
			},
			ReadTimeout:    cfg.ReadTimeout,
			WriteTimeout:   cfg.WriteTimeout,
			IdleTimeout:    cfg.IdleTimeout,
			ReadBufferSize: cfg.MaxHeaderBytes, // fasthttp reads the headers whole into it
			// Buffers are taken from a pool when a request arrives and given
			// back once it is read, so only requests on their way in hold
			// one. It also closes a connection that times out before its
			// first byte without an answer.
			ReduceMemoryUsage:            true,
			Name:                         "eurekagate",
			DisablePreParseMultipartForm: true,
		},
	}
	s.srv.Handler = s.guardHosts(withOther(api, cfg.Other))
	return s
}

// withOther sends API paths to the API and the rest to other.
func withOther(api *API, other http.Handler) fasthttp.RequestHandler {
	h := FastHTTPHandler(api)
	if other == nil {
		return h
	}
	// The adaptor would give handlers the RequestCtx as their request's
	// context, from which a derived context (a long poll's timeout) gets a
	// goroutine that outlives the request; the API's context is a plain
	// one that ends when the server stops.
	o := fasthttpadaptor.NewFastHTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.ServeHTTP(w, r.WithContext(api.closed))
	}))
	return func(ctx *fasthttp.RequestCtx) {
		path := transient(ctx.Request.URI().PathOriginal())
		if !validEscapes(path) {
			// net/http would not take it either; say so instead of a 500.
			ctx.Error(malformedEscape, fasthttp.StatusBadRequest)
			return
		}
		if api.Match(path) {
			h(ctx)
			return
		}
		o(ctx)
	}
}

// Start listens on the configured address and serves in the background. It
// returns the listen error, if any, without blocking.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	if err := s.startHostGuard(ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	s.run.Start(s.srv, ln)
	return nil
}

// Addr returns the address the server listens on, after Start.
func (s *Server) Addr() net.Addr { return s.run.Addr() }

// Stop stops accepting connections, lets in-flight requests finish (until
// ctx is done) and waits for the serving goroutine.
func (s *Server) Stop(ctx context.Context) error {
	s.api.Close() // held watches answer now, not at the end of their wait
	return s.run.Stop(ctx)
}
