package balancer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// HTTPClient sends requests to an application by name: the request URL's
// host is the app name (http://inventory/items/7), replaced by the address
// of the instance the Balancer picks: its plain port for an http URL, its
// secure port for an https one, and its secure port over HTTPS for an http
// URL when the instance enables only that. A request counts as in progress (for
// LeastRequests) until its response body is closed, so close it, as
// net/http asks.
//
// A request whose context carries a Selector (WithSelector; a service
// served through Propagate has its requests' contexts carry the subset the
// gateway chose), or that has a RouteHeader, goes to an instance of that
// subset when the application has an UP one in it, and to any instance
// when it has none; either way it carries the selector on in RouteHeader,
// so that the next service's calls keep to the subset as well.
//
// A request that fails at the instance is reported to the balancer and
// retried on another instance (up to Retries times):
//
//   - a connection that cannot be made (refused, or not made within
//     DialTimeout) is reported with ReportFailure and retried whatever
//     the method, since the instance received nothing;
//   - a request whose response headers do not arrive within
//     ResponseHeaderTimeout is reported with ReportTimeout, which ejects
//     the instance at once: a hung instance gets no new request after its
//     first timeout, for the balancer's Cooldown;
//   - a connection reset or closed before the response headers is
//     reported with ReportFailure.
//
// After a timeout or a reset the instance may have acted on the request,
// so only idempotent requests (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) are
// retried then. A request whose body cannot be replayed (no GetBody) is
// never retried. A request the caller cancels is not a failure of the
// instance.
type HTTPClient struct {
	// Balancer picks the instances. Required.
	Balancer *Balancer
	// Client sends the requests. Default: a client like
	// http.DefaultClient whose connections are made within DialTimeout.
	Client *http.Client
	// Retries is how many other instances a failed request is tried on.
	// Default 2; negative: none.
	Retries int
	// DialTimeout bounds making a connection to an instance, with the
	// default Client (a Client of yours connects as its Transport says).
	// Default 3s, as Caddy's reverse_proxy.
	DialTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for an instance's response
	// headers, from sending the request (connecting included), with any
	// Client. It should exceed the slowest normal response of the
	// application: a timeout ejects the instance. Default 5s; negative:
	// none.
	ResponseHeaderTimeout time.Duration

	clientOnce    sync.Once
	defaultClient *http.Client
	subsets       subsetLists
}

// Do sends req to an instance of the app named by req.URL.Host.
func (c *HTTPClient) Do(req *http.Request) (*http.Response, error) {
	client := c.client()
	retries := c.Retries
	switch {
	case retries == 0:
		retries = 2
	case retries < 0:
		retries = 0
	}
	headerTimeout := c.ResponseHeaderTimeout
	if headerTimeout == 0 {
		headerTimeout = 5 * time.Second
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	app := eureka.AppName(req.URL.Hostname())
	list := c.Balancer.src.Instances(app)
	if len(list) == 0 {
		return nil, fmt.Errorf("%w of %s", ErrNoInstances, app) // "balancer: no UP instance of INVENTORY"
	}
	try := c.Balancer.Retry(app, list, retries, replayable && Idempotent(req.Method))
	sel, selected := requestSelector(req)
	if selected {
		c.selectSubset(&try, app, list, sel)
	}
	for {
		inst := try.Next()
		out, err := instanceRequest(req, inst, try.Attempt()-1)
		if selected {
			out.Header.Set(RouteHeader, sel.String())
		}
		if err != nil {
			return nil, err
		}
		end := c.Balancer.Begin(inst)
		resp, err := sendWithin(client, out, headerTimeout)
		if err == nil {
			try.Succeeded()
			resp.Body = endOnClose(resp.Body, end)
			return resp, nil
		}
		end()
		if req.Context().Err() != nil {
			return nil, err // the caller gave up: not the instance's fault
		}
		kind := failure(err)
		if kind == 0 {
			return nil, err
		}
		if (kind == Refused && !replayable) || !try.Failed(kind) {
			return nil, err
		}
	}
}

// client returns the Client, or the default one.
func (c *HTTPClient) client() *http.Client {
	if c.Client != nil {
		return c.Client
	}
	c.clientOnce.Do(func() {
		dialTimeout := c.DialTimeout
		if dialTimeout <= 0 {
			dialTimeout = 3 * time.Second
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
		c.defaultClient = &http.Client{Transport: t}
	})
	return c.defaultClient
}

// errHeaderTimeout is the cause of a request given up for want of response
// headers.
var errHeaderTimeout = errors.New("no response headers in time")

// sendWithin sends req, giving up when its response headers have not
// arrived within timeout (none when negative). The request's context stays
// alive while the response body is read, until the body is closed.
func sendWithin(client *http.Client, req *http.Request, timeout time.Duration) (*http.Response, error) {
	if timeout < 0 {
		return client.Do(req)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(timeout, func() { cancel(errHeaderTimeout) })
	resp, err := client.Do(req.WithContext(ctx))
	if !timer.Stop() {
		// The timer fired: whatever Do returned, the request timed out.
		if err == nil {
			resp.Body.Close()
		}
		cancel(nil)
		return nil, &timeoutError{method: req.Method, addr: req.URL.Host, timeout: timeout}
	}
	if err != nil {
		cancel(nil)
		return nil, err
	}
	resp.Body = endOnClose(resp.Body, func() { cancel(nil) })
	return resp, nil
}

// timeoutError is a request given up for want of response headers. It is
// a net.Error whose Timeout is true, and it matches
// os.ErrDeadlineExceeded.
type timeoutError struct {
	method, addr string
	timeout      time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("balancer: %s %s: no response headers within %v", e.method, e.addr, e.timeout)
}
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }
func (e *timeoutError) Unwrap() error   { return os.ErrDeadlineExceeded }

// failure classifies err, an error from sending a request whose caller
// had not given up: 0 when it is not the instance's failure.
func failure(err error) Failure {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return Refused
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return TimedOut
	}
	if errors.As(err, &op) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return Broken
	}
	return 0
}

// endOnClose returns body, calling end when it is closed. A body that can
// also be written (a 101 Switching Protocols response's) stays writable.
func endOnClose(body io.ReadCloser, end func()) io.ReadCloser {
	rc := &endingBody{ReadCloser: body, end: end}
	if w, ok := body.(io.Writer); ok {
		return &endingWriteBody{endingBody: rc, Writer: w}
	}
	return rc
}

type endingBody struct {
	io.ReadCloser
	end func()
}

func (b *endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}

type endingWriteBody struct {
	*endingBody
	io.Writer
}

// instanceRequest clones req for inst. Retries get a fresh body.
func instanceRequest(req *http.Request, inst *eureka.InstanceInfo, attempt int) (*http.Request, error) {
	out := req.Clone(req.Context())
	secure := req.URL.Scheme == "https"
	if !secure && !inst.Port.Enabled && inst.SecurePort.Enabled {
		secure, out.URL.Scheme = true, "https" // only its secure port is open
	}
	out.URL.Host = Address(inst, secure)
	out.Host = ""
	if attempt > 0 && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		out.Body = body
	}
	return out, nil
}

// Address returns host:port of inst: its secure port when secure, else its
// port. The host is the registered hostName (Spring registers the IP there
// when preferIpAddress is set).
func Address(inst *eureka.InstanceInfo, secure bool) string {
	port := inst.Port.Number
	if secure {
		port = inst.SecurePort.Number
	}
	host := inst.HostName
	if host == "" {
		host = inst.IPAddr
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}
