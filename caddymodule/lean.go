package caddymodule

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"golang.org/x/net/http/httpproxy"

	"github.com/eurekagate/eurekagate/routing"
)

// leanClient is the gateway's own HTTP/1.1 client for plain-HTTP
// attempts: it runs entirely on the handler's goroutine, with neither a
// goroutine per connection nor channels between them, which is what
// net/http's Transport spends beyond the two system calls of a request
// (its connection's read and write loops woken and handed each request
// and response). Its connections are kept per instance address
// (leanPool); what it writes and how it reads the answer are net/http's
// (lean_request.go, lean_response.go), and its timeouts the router's.
//
// TLS (secure ports), Upgrade requests, and instances the environment's
// HTTP_PROXY and NO_PROXY send through a proxy (read once, when the
// transport is made) are not its: they stay on net/http's Transport.
type leanClient struct {
	pool        *leanPool
	headTimeout time.Duration
	// proxy, when the environment names an HTTP proxy, says which
	// addresses it takes.
	proxy func(*url.URL) (*url.URL, error)
}

// newLeanClient makes the client with cfg's timeouts and starts its
// pool's sweeper, which close stops: a connection idle for
// idleConnTimeout is closed when taken, or by the sweeper within a
// quarter of it more.
func newLeanClient(cfg routing.Config, now func() time.Time) *leanClient {
	l := &leanClient{
		pool:        newLeanPool(cfg.DialTimeout, cfg.ReadTimeout, idleConnTimeout, idleConnTimeout/4, maxIdlePerInstance, now),
		headTimeout: cfg.ResponseHeaderTimeout,
	}
	if env := httpproxy.FromEnvironment(); env.HTTPProxy != "" {
		l.proxy = env.ProxyFunc()
	}
	return l
}

// close closes the idle connections and stops the sweeper, waiting for
// it.
func (l *leanClient) close() { l.pool.close() }

// carries reports whether the lean client carries r to the instance
// at addr (on its plain port, r not an Upgrade).
func (l *leanClient) carries(r *http.Request, addr string) bool {
	if !leanSendable(r) {
		return false
	}
	if l.proxy == nil {
		return true
	}
	p, err := l.proxy(&url.URL{Scheme: "http", Host: addr})
	return p == nil && err == nil // an error is the Transport's to report
}

// attempt sends r, with the pending fields of vals, to the instance at
// addr and writes its answer to w, or returns the attempt's error as the
// Transport path does (see ownTransport.attempt). A connection from the
// pool that fails before any byte of the answer is retried once on a new
// connection when r may be sent again, as net/http does: without a body,
// and either nothing of it written or its method idempotent and safe
// (GET, HEAD, OPTIONS, TRACE) or it carries an Idempotency-Key.
func (l *leanClient) attempt(w *statusWriter, r *http.Request, vals *headerValues, addr string) error {
	c, err := l.pool.get(r.Context(), addr)
	if err != nil {
		return attemptError(r, err)
	}
	res, err := l.exchange(w, r, vals, c)
	if err != nil && mayRetry(r, c, err) {
		c.close()
		if c, err = l.pool.dial(r.Context(), addr); err != nil {
			return attemptError(r, err)
		}
		res, err = l.exchange(w, r, vals, c)
	}
	if err != nil {
		c.close()
		return attemptError(r, err)
	}
	if res.StatusCode == http.StatusSwitchingProtocols { // r asked for no Upgrade
		c.disarm()
		c.close()
		return caddyhttp.Error(http.StatusBadGateway, errors.New("the instance switched to a protocol not asked for: "+res.Header.Get("Upgrade")))
	}
	err = writeResponse(w, res)
	c.gz.release()
	if c.disarm() && err == nil && c.body.eof && !res.Close && !c.spent {
		l.pool.put(c)
	} else {
		c.close()
	}
	return err
}

// exchange writes r (with the pending fields of vals) on c and reads the
// answer's head, c's reads and writes aborted should r's client leave
// (until c.disarm).
func (l *leanClient) exchange(w *statusWriter, r *http.Request, vals *headerValues, c *leanConn) (*http.Response, error) {
	c.got, c.sent, c.spent = 0, 0, false
	c.arm(r.Context())
	gzip, err := c.writeRequest(r, vals)
	if bre, ok := errors.AsType[bodyReadError](err); ok {
		c.disarm()
		return nil, bre.error // the client's failure, as net/http returns it
	}
	if err != nil {
		if c.sent == 0 || !hasBody(r) || timedOut(err) || r.Context().Err() != nil {
			c.disarm()
			return nil, err
		}
		// The instance may have answered before it took the whole body
		// (a 413, say) and closed: its answer is the attempt's, as
		// net/http, reading while it writes, would have it.
		c.spent = true
	}
	res, rerr := c.readResponse(w, r, l.headTimeout, gzip)
	if rerr == nil {
		return res, nil
	}
	if err == nil {
		err = rerr
	}
	c.disarm()
	return nil, err
}

// mayRetry reports whether r's attempt on c, failed with err, may go
// again on a new connection.
func mayRetry(r *http.Request, c *leanConn, err error) bool {
	if !c.reused || c.got > 0 || hasBody(r) || r.Context().Err() != nil {
		return false
	}
	if timedOut(err) {
		return false // a hung instance is routing's to retry, or not
	}
	if c.sent == 0 {
		return true
	}
	switch r.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, key := r.Header["Idempotency-Key"]
	_, xkey := r.Header["X-Idempotency-Key"]
	return key || xkey
}

// timedOut reports whether err is a timeout.
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
