package eurekahttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/settings"
)

// Defaults of Config and ClusterConfig. The timeouts are the Java client's
// (eurekaServerConnectTimeoutSeconds and eurekaServerReadTimeoutSeconds).
const (
	DefaultConnectTimeout     = 5 * time.Second
	DefaultReadTimeout        = 8 * time.Second
	DefaultMaxBodySize        = 1 << 30 // 1 GiB
	DefaultQuarantineDuration = 30 * time.Second
	DefaultUserAgent          = "eurekagate"
)

// idleConnTimeout is how long an unused keep-alive connection is kept.
const idleConnTimeout = 30 * time.Second

// Config configures a Client. The zero value gives the defaults.
type Config struct {
	// ConnectTimeout bounds establishing a connection. Default 5s.
	ConnectTimeout time.Duration
	// ReadTimeout bounds writing a request and reading its whole answer,
	// once connected. Default 8s. A request that times out is not resent
	// to the same server.
	ReadTimeout time.Duration
	// MaxBodySize is the largest answer accepted, in bytes, both as
	// received and after gzip decoding. A larger one is an error wrapping
	// ErrBodyTooLarge. Default 1 GiB: the registry of one node at the
	// scale it holds, a million instances of about 1 KiB each (a Spring
	// Boot instance's JSON is 1 to 1.5 KiB; eurekabench's, 0.4 KiB), so
	// that our readers read what our server serves; it stays a guard
	// against a gzip bomb from a hostile server.
	MaxBodySize int
	// MaxBodySizeSetting names MaxBodySize as the user sets it in the
	// host (a flag, a Caddy option, a Config field), so that the error
	// of an answer over it says what to raise. Default "MaxBodySize".
	MaxBodySizeSetting string
	// UserAgent is sent as the User-Agent header. Default "eurekagate".
	UserAgent string
	// TLS configures the connections to https:// service URLs: the CAs
	// to trust, the client certificate to present to servers that ask for
	// one (internal/tlsfiles makes one from PEM files). Its ServerName,
	// if empty, is the URL's host. Default: nil, Go's defaults (the
	// system's roots, no client certificate).
	TLS *tls.Config
}

func (c Config) withDefaults() Config {
	settings.Default(&c.ConnectTimeout, DefaultConnectTimeout)
	settings.Default(&c.ReadTimeout, DefaultReadTimeout)
	settings.Default(&c.MaxBodySize, DefaultMaxBodySize)
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.MaxBodySizeSetting == "" {
		c.MaxBodySizeSetting = "MaxBodySize"
	}
	return c
}

// Client sends requests to Eureka servers over HTTP/1.1, keeping
// connections alive between requests. Create it with NewClient and Close it
// when done. It is safe for concurrent use.
type Client struct {
	cfg  Config
	http *fasthttp.Client
	// held serves requests with their own Timeout, which the server may
	// hold (a watch): net/http, because its requests end when their context
	// does, so a client that stops does not wait for the server's answer.
	held *http.Client
}

// NewClient returns a Client for cfg. It does no I/O.
func NewClient(cfg Config) *Client {
	cfg = cfg.withDefaults()
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout}
	return &Client{cfg: cfg, http: newFastClient(cfg, cfg.ReadTimeout), held: &http.Client{Transport: &http.Transport{
		DialContext:        dialer.DialContext,
		IdleConnTimeout:    idleConnTimeout,
		DisableCompression: true, // Accept-Encoding is ours to send, and the body ours to decode
		TLSClientConfig:    cfg.TLS,
	}}}
}

func newFastClient(cfg Config, readTimeout time.Duration) *fasthttp.Client {
	connect := cfg.ConnectTimeout
	return &fasthttp.Client{
		Name:                cfg.UserAgent,
		ReadTimeout:         readTimeout,
		WriteTimeout:        cfg.ReadTimeout,
		MaxIdleConnDuration: idleConnTimeout,
		MaxResponseBodySize: cfg.MaxBodySize,
		TLSConfig:           cfg.TLS,
		// timeout is what is left of a context deadline, or 0.
		DialTimeout: func(addr string, timeout time.Duration) (net.Conn, error) {
			if timeout <= 0 || timeout > connect {
				timeout = connect
			}
			return fasthttp.DialDualStackTimeout(addr, timeout)
		},
		// Resend once after a connection failure that is not a timeout
		// (typically a keep-alive connection the server had closed), but
		// never a POST.
		MaxIdemponentCallAttempts: 2,
		RetryIfErr: func(req *fasthttp.Request, _ int, err error) (resetTimeout, retry bool) {
			return false, !isTimeout(err) && !req.Header.IsPost()
		},
	}
}

// Close closes the idle connections. Requests still running finish; the
// Client stays usable.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
	c.held.CloseIdleConnections()
}

// Request is one request to a Eureka server.
type Request struct {
	// Method is the HTTP method. Default GET.
	Method string
	// Path is relative to the service URL's base path, with an optional
	// query: "apps/", "apps/ORDERS/h1?status=UP". A leading "/" is
	// ignored. The caller escapes path segments (url.PathEscape).
	Path string
	// Body, if not nil, is sent with Content-Type: application/json.
	Body []byte
	// Header holds extra headers, such as
	// x-netflix-discovery-replication: true. They are set after the
	// defaults (Accept, Accept-Encoding, Content-Type, Authorization) and
	// replace a default of the same name.
	Header http.Header
	// FailOver decides which statuses make a Cluster try the next server.
	// Default FailOverOnServerError. Client.Do does not use it.
	FailOver FailoverRule
	// Timeout, if set, bounds this request instead of ReadTimeout: for a
	// request the server may hold, such as a watch.
	Timeout time.Duration
}

func (r Request) method() string {
	if r.Method == "" {
		return http.MethodGet
	}
	return r.Method
}

// url is the request's URL on server, without credentials.
func (r Request) url(server eureka.ServiceURL) string {
	return server.Base + strings.TrimPrefix(r.Path, "/")
}

// Response is a server's answer.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Body is the answer's body, gzip-decoded. It belongs to the caller:
	// it is not reused by the Client.
	Body []byte
	// Server is the service URL that answered.
	Server eureka.ServiceURL
	// Header holds the answer's headers.
	Header http.Header
}

// Do sends r to server and returns its answer, whatever the status. An
// error means no usable answer: the connection failed or timed out, ctx
// ended, or the body was undecodable or over MaxBodySize. It is an *Error
// naming the method and URL.
//
// ctx's deadline, if earlier than the timeouts, bounds the request; a
// cancellation without a deadline is noticed only before the request is
// sent.
func (c *Client) Do(ctx context.Context, server eureka.ServiceURL, r Request) (Response, error) {
	method, url := r.method(), r.url(server)
	fail := func(err error) (Response, error) {
		return Response{}, &Error{Method: method, URL: url, Err: c.explainTLS(url, err)}
	}
	if err := contextDone(ctx); err != nil {
		return fail(err)
	}
	if r.Timeout > 0 {
		return c.doHeld(ctx, server, r)
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(url)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	if server.Authorization != "" {
		req.Header.Set("Authorization", server.Authorization)
	}
	if r.Body != nil {
		req.Header.SetContentType("application/json")
		req.SetBody(r.Body)
	}
	for name, values := range r.Header {
		req.Header.Del(name)
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	var err error
	switch deadline, ok := ctx.Deadline(); {
	case ok:
		err = c.http.DoDeadline(req, resp, deadline)
	default:
		err = c.http.Do(req, resp)
	}
	switch {
	case err == nil:
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return fail(c.tooLarge())
	case contextDone(ctx) != nil:
		return fail(fmt.Errorf("%w: %w", contextDone(ctx), err))
	default:
		return fail(err)
	}
	body, err := decodeBody(resp.Header.ContentEncoding(), resp.Body(), c.cfg.MaxBodySize)
	if errors.Is(err, ErrBodyTooLarge) {
		err = c.tooLarge()
	}
	if err != nil {
		return fail(err)
	}
	header := http.Header{}
	for k, v := range resp.Header.All() {
		header.Add(string(k), string(v))
	}
	return Response{Status: resp.StatusCode(), Body: body, Server: server, Header: header}, nil
}

// contextDone is ctx.Err(), also when ctx's deadline has passed but its
// timer has not yet marked it done: fasthttp's deadline, the same instant,
// can fire first.
func contextDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *Client) tooLarge() error {
	return fmt.Errorf("%w of %d bytes (raise %s to read it)", ErrBodyTooLarge, c.cfg.MaxBodySize, c.cfg.MaxBodySizeSetting)
}

// decodeBody returns a copy of raw, gzip-decoded if encoding says so, of at
// most limit bytes.
func decodeBody(encoding, raw []byte, limit int) ([]byte, error) {
	switch {
	case len(encoding) == 0 || bytes.EqualFold(encoding, []byte("identity")):
		return bytes.Clone(raw), nil
	case bytes.EqualFold(encoding, []byte("gzip")) || bytes.EqualFold(encoding, []byte("x-gzip")):
	default:
		return nil, fmt.Errorf("unsupported Content-Encoding %q", encoding)
	}
	if len(raw) == 0 {
		return nil, nil // a bodiless answer (204) with the header set
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("gzip body: %w", err)
	}
	var out bytes.Buffer
	n, err := out.ReadFrom(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("gzip body: %w", err)
	}
	if n > int64(limit) {
		return nil, ErrBodyTooLarge
	}
	return out.Bytes(), nil
}

// doHeld sends a request the server may hold, bounded by r.Timeout and
// ended early when ctx ends.
func (c *Client) doHeld(ctx context.Context, server eureka.ServiceURL, r Request) (Response, error) {
	method, url := r.method(), r.url(server)
	fail := func(err error) (Response, error) {
		return Response{}, &Error{Method: method, URL: url, Err: c.explainTLS(url, err)}
	}
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return fail(err)
	}
	c.setHeaders(req, server, r)
	resp, err := c.held.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.cfg.MaxBodySize)+1))
	if err != nil {
		return fail(err)
	}
	if len(raw) > c.cfg.MaxBodySize {
		return fail(c.tooLarge())
	}
	decoded, err := decodeBody([]byte(resp.Header.Get("Content-Encoding")), raw, c.cfg.MaxBodySize)
	if errors.Is(err, ErrBodyTooLarge) {
		err = c.tooLarge()
	}
	if err != nil {
		return fail(err)
	}
	return Response{Status: resp.StatusCode, Body: decoded, Server: server, Header: resp.Header}, nil
}
