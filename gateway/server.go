package gateway

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/eurekagate/eurekagate/internal/fastserve"
	"github.com/eurekagate/eurekagate/internal/settings"

	"github.com/valyala/fasthttp"
)

// Defaults of ServerConfig.
const (
	DefaultAddr          = ":8080"
	DefaultReadTimeout   = 60 * time.Second
	DefaultWriteTimeout  = 60 * time.Second
	DefaultHeaderTimeout = 60 * time.Second
)

// ServerConfig configures a Server. Its zero value is the defaults.
type ServerConfig struct {
	// Addr is the listen address. Default ":8080".
	Addr string
	// ReadTimeout closes a client connection on which nothing arrives for
	// this long: a kept-alive connection between requests, or one whose
	// request header or body stops coming, however long the body (as
	// nginx's keepalive_timeout and client_body_timeout). It bounds each
	// wait; HeaderTimeout bounds a header as a whole. Upgraded
	// connections (WebSockets) are exempt. Default 60s.
	ReadTimeout time.Duration
	// HeaderTimeout closes a client connection whose request header has
	// not all come this long after its first byte, however steadily it
	// trickles in, as nginx's client_header_timeout (whose default it
	// shares). Default 60s.
	HeaderTimeout time.Duration
	// WriteTimeout is how long a client may take no data while the
	// gateway writes a response to it, however long the response, as
	// nginx's send_timeout. Default 60s.
	WriteTimeout time.Duration
	// Logger receives fasthttp's messages about broken connections.
	// Default: discarded, since they report client errors.
	Logger fasthttp.Logger
	// Loops is how many event loops serve the requests a gateway sees
	// most: no body, no Upgrade, for a registered application, answered
	// with a body of known length up to 64 KiB (or none). The loops read
	// a connection only when it has data, as nginx does, without a
	// goroutine per connection, which is what brings the gateway to
	// nginx's throughput. A connection that sends any other request goes
	// on in fasthttp from then on; a longer or chunked response streams
	// from a goroutine. Default GOMAXPROCS (as it was before a Server
	// raised it); negative for none, so that fasthttp serves every
	// connection (always so on Windows, where a connection cannot pass
	// from a loop to fasthttp).
	//
	// Where the loops differ: a client that half-closes its connection
	// after a request gets no answer (the loop closes on end of input); a
	// client that sends more than 1 MiB ahead of its answers is cut off;
	// Config.MaxConnsPerInstance is shared out among the loops.
	Loops int
	// SpareProcessor makes Start raise GOMAXPROCS to Loops+1 when it is
	// lower, and leave it so: one of the runtime's processors stays free
	// for the rest of the process while the loops wait for events
	// (loop_procs.go says why). GOMAXPROCS is the process's, and once set
	// the runtime no longer follows the container's CPU limit, so a
	// process that owns it decides: cmd/eureka turns this on, and an
	// application embedding the gateway chooses for itself. Default off.
	SpareProcessor bool
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// Server serves a Gateway on an address of its own with fasthttp.
type Server struct {
	g     *Gateway
	cfg   ServerConfig
	srv   *fasthttp.Server
	run   fastserve.Runner
	loops *loops // nil when fasthttp serves every connection
}

// NewServer returns a server for g. It does not listen until Start.
// Stopping the server does not close g: call g.Close after Stop.
func NewServer(g *Gateway, cfg ServerConfig) *Server {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	settings.Default(&cfg.ReadTimeout, DefaultReadTimeout)
	settings.Default(&cfg.WriteTimeout, DefaultWriteTimeout)
	settings.Default(&cfg.HeaderTimeout, DefaultHeaderTimeout)
	if cfg.Logger == nil {
		cfg.Logger = discardLogger{}
	}
	if cfg.Loops == 0 {
		cfg.Loops = defaultLoops()
	}
	if !loopsSupported {
		cfg.Loops = -1
	}
	s := &Server{g: g, cfg: cfg, run: fastserve.Runner{Name: "gateway", Log: g.cfg.Logger}}
	s.srv = &fasthttp.Server{
		Handler: g.Handler,
		Logger:  cfg.Logger,
		// The connections bound each read and write themselves (see
		// Start), which costs no deadline change per request; but for
		// the header: fasthttp's ReadTimeout starts at a request's first
		// byte (on a new connection, at its opening) and the connection
		// keeps it while it is sooner than its idle limit, until
		// HeaderReceived sets a far one for the body.
		ReadTimeout:     cfg.HeaderTimeout,
		IdleTimeout:     cfg.ReadTimeout,
		HeaderReceived:  func(*fasthttp.RequestHeader) fasthttp.RequestConfig { return bodyReads },
		ReadBufferSize:  bufferSize,
		WriteBufferSize: bufferSize,
		LazyRequestTime: true,
		// Bodies larger than this stream through the handler.
		StreamRequestBody:            true,
		MaxRequestBodySize:           prefetchSize,
		DisablePreParseMultipartForm: true,
		// The instances' headers go out as they sent them.
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		NoDefaultDate:         true, // the instance's passes, or stripResponse sets one

		// Clients of a stopping server are told to reconnect elsewhere.
		CloseOnShutdown: true,
		ErrorHandler:    requestError,
	}
	return s
}

// Start listens on the configured address and serves in the background. It
// returns the listen error, if any, without blocking.
func (s *Server) Start() error {
	if s.cfg.Loops < 0 {
		ln, err := net.Listen("tcp", s.cfg.Addr)
		if err != nil {
			return err
		}
		s.run.Start(s.srv, idleListener{Listener: ln, read: s.cfg.ReadTimeout, write: s.cfg.WriteTimeout})
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	if s.cfg.SpareProcessor && s.cfg.Loops > 0 {
		roomForLoops(s.cfg.Loops)
	}
	h := newHandoffListener()
	l := newLoops(s.g, s.cfg, h, s.cfg.Loops)
	if err := l.start(ln); err != nil {
		return err
	}
	h.addr = l.addr
	s.loops = l
	s.run.Start(s.srv, idleListener{Listener: h, read: s.cfg.ReadTimeout, write: s.cfg.WriteTimeout})
	return nil
}

// bodyReads lifts the header's deadline once the header is read: a
// hundred years, which the connection's idle limit always beats.
var bodyReads = fasthttp.RequestConfig{ReadTimeout: 100 * 365 * 24 * time.Hour}

// requestError answers a request fasthttp could not read, as its own
// handler does but that a header cut by HeaderTimeout is a 408 (fasthttp
// finds the timeout only unwrapped), as the loops answer it.
func requestError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	switch {
	case errors.As(err, &small):
		ctx.Error("Too big request header", fasthttp.StatusRequestHeaderFieldsTooLarge)
	case errors.As(err, &ne) && ne.Timeout():
		ctx.Error("Request timeout", fasthttp.StatusRequestTimeout)
	default:
		ctx.Error("Error when parsing request", fasthttp.StatusBadRequest)
	}
}

// Addr returns the address the server listens on, after Start.
func (s *Server) Addr() net.Addr {
	if s.loops != nil {
		return s.loops.addr
	}
	return s.run.Addr()
}

// Stop stops accepting connections, lets in-flight requests finish (until
// ctx is done; responses streaming to their clients included) and waits
// for the goroutines serving them. Upgraded connections and lingering
// closes are the Gateway's: its Close ends them.
func (s *Server) Stop(ctx context.Context) error {
	var err error
	if s.loops != nil {
		err = s.loops.stop(ctx)
	}
	return errors.Join(err, s.run.Stop(ctx))
}
