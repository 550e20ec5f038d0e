package gateway

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// Defaults of ServerConfig.
const (
	DefaultAddr         = ":8080"
	DefaultReadTimeout  = 60 * time.Second
	DefaultWriteTimeout = 60 * time.Second
	DefaultIdleTimeout  = 90 * time.Second
)

// ServerConfig configures a Server. Its zero value is the defaults.
type ServerConfig struct {
	// Addr is the listen address. Default ":8080".
	Addr string
	// ReadTimeout bounds the reading of a request's header (and of the
	// first 64 KiB of its body); after that, a body may pause this long
	// between two reads, however long it is, as nginx's
	// client_body_timeout. Default 60s.
	ReadTimeout time.Duration
	// WriteTimeout is how long a client may take no data while the
	// gateway writes a response to it, however long the response, as
	// nginx's send_timeout. Default 60s.
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive client connection that sends no
	// request for this long. Default 90s.
	IdleTimeout time.Duration
	// Logger receives fasthttp's messages about broken connections.
	// Default: discarded, since they report client errors.
	Logger fasthttp.Logger
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// Server serves a Gateway on an address of its own with fasthttp.
type Server struct {
	g    *Gateway
	cfg  ServerConfig
	srv  *fasthttp.Server
	ln   net.Listener
	done chan struct{}

	mu       sync.Mutex
	err      error
	stopping bool
}

// NewServer returns a server for g. It does not listen until Start.
// Stopping the server does not close g: call g.Close after Stop.
func NewServer(g *Gateway, cfg ServerConfig) *Server {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = discardLogger{}
	}
	s := &Server{g: g, cfg: cfg}
	s.srv = &fasthttp.Server{
		Handler:         s.handle,
		Logger:          cfg.Logger,
		ReadTimeout:     cfg.ReadTimeout,
		IdleTimeout:     cfg.IdleTimeout,
		ReadBufferSize:  bufferSize,
		WriteBufferSize: bufferSize,
		// Bodies larger than this stream through the handler.
		StreamRequestBody:            true,
		MaxRequestBodySize:           prefetchSize,
		DisablePreParseMultipartForm: true,
		// The instances' headers go out as they sent them.
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		// Clients of a stopping server are told to reconnect elsewhere.
		CloseOnShutdown: true,
	}
	return s
}

// handle lets a streamed request body pause ReadTimeout between reads,
// rather than have it all arrive within ReadTimeout of the header.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	if ctx.Request.IsBodyStream() {
		if n := ctx.Request.Header.ContentLength(); n < 0 || n > prefetchSize {
			ctx.Request.SetBodyStream(&readIdleBody{r: ctx.Request.BodyStream(), ctx: ctx, timeout: s.cfg.ReadTimeout}, n)
		}
	}
	s.g.Handler(ctx)
}

// readIdleBody moves the client connection's read deadline as its body
// is read, an eighth of the timeout at a time.
type readIdleBody struct {
	r       io.Reader
	ctx     *fasthttp.RequestCtx
	timeout time.Duration
	armed   time.Time
}

func (b *readIdleBody) Read(p []byte) (int, error) {
	if now := time.Now(); now.Sub(b.armed) > b.timeout/8 {
		b.armed = now
		if err := b.ctx.SetReadDeadline(now.Add(b.timeout)); err != nil {
			return 0, err
		}
	}
	return b.r.Read(p)
}

// Start listens on the configured address and serves in the background. It
// returns the listen error, if any, without blocking.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	s.ln = ln
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(writeIdleListener{Listener: ln, timeout: s.cfg.WriteTimeout}); err != nil {
			s.mu.Lock()
			if !s.stopping {
				s.err = err
			}
			s.mu.Unlock()
		}
	}()
	return nil
}

// Addr returns the address the server listens on, after Start.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Stop stops accepting connections, lets in-flight requests finish (until
// ctx is done; responses streaming to their clients included) and waits
// for the serving goroutine. Upgraded connections are the Gateway's: its
// Close ends them.
func (s *Server) Stop(ctx context.Context) error {
	if s.done == nil {
		return nil
	}
	// Close the listener ourselves: fasthttp's Shutdown does nothing if it
	// runs before Serve has registered the listener.
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	s.ln.Close()
	err := s.srv.ShutdownWithContext(ctx)
	if errors.Is(err, net.ErrClosed) {
		err = nil // we closed it
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		return errors.Join(err, ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(err, s.err)
}
