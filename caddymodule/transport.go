package caddymodule

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/eurekagate/eurekagate/routing"
)

// The values of eureka_gateway's transport option.
const (
	// transportOwn carries each attempt with the gateway's own transport
	// (the default).
	transportOwn = "eureka"
	// transportReverseProxy carries each attempt with an embedded
	// reverse_proxy.
	transportReverseProxy = "reverse_proxy"
)

// checkTransport refuses a transport option that names no transport.
func checkTransport(v string) error {
	switch v {
	case "", transportOwn, transportReverseProxy:
		return nil
	}
	return fmt.Errorf("transport %q is not one of %s (the default) or %s", v, transportOwn, transportReverseProxy)
}

// ownTransport carries eureka_gateway's attempts to the instance routing
// picked without reverse_proxy, whose per-request work (cloning the
// request, the replacer, its logger's fields, its upstream bookkeeping)
// cost more than routing itself: plain-HTTP requests on the gateway's
// lean client (leanClient: on the handler's goroutine, connections kept
// alive per instance), and TLS to secure ports, Upgrade tunnels and
// instances behind the environment's HTTP proxy on a net/http Transport
// per kind of connection, all with the router's timeouts. What it does
// to the headers is reverse_proxy's (see prepareOutgoing and
// writeResponse), so that instances and clients see the same bytes
// either way.
type ownTransport struct {
	lean *leanClient
	// by [secure][upgrade]: to the plain or the secure ports (over TLS),
	// and for Upgrade requests, whose tunnels may stay quiet as long as
	// they like, without the read timeout.
	rt      [2][2]*http.Transport
	tunnels tunnels
}

// maxIdlePerInstance is how many idle connections are kept per instance:
// enough for a busy gateway's concurrent requests to one instance, so
// that a burst does not dial anew (net/http's default keeps two).
const maxIdlePerInstance = 256

// idleConnTimeout is how long an idle connection to an instance is kept,
// reverse_proxy's default.
const idleConnTimeout = 2 * time.Minute

// newOwnTransport makes the transports with the router's timeouts,
// verifying secure instances against caFiles' certificate authorities
// (none: the system's roots).
func newOwnTransport(cfg routing.Config, caFiles []string) (*ownTransport, error) {
	var roots *x509.CertPool
	if len(caFiles) > 0 {
		roots = x509.NewCertPool()
		for _, f := range caFiles {
			pem, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("tls_trusted_ca_certs: %v", err)
			}
			if !roots.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("tls_trusted_ca_certs: %s: no PEM certificate in it", f)
			}
		}
	}
	t := &ownTransport{lean: newLeanClient(cfg, time.Now)}
	for secure := range 2 {
		for upgrade := range 2 {
			readTimeout := cfg.ReadTimeout
			if upgrade == 1 {
				readTimeout = 0
			}
			// Compression stays on, as reverse_proxy has it: a request
			// without Accept-Encoding asks for gzip, and the answer is
			// decompressed for the client.
			rt := &http.Transport{
				// HTTP_PROXY, HTTPS_PROXY and NO_PROXY, as reverse_proxy
				// reads them.
				Proxy:               http.ProxyFromEnvironment,
				DialContext:         dialer(cfg.DialTimeout, readTimeout),
				MaxIdleConnsPerHost: maxIdlePerInstance,
				IdleConnTimeout:     idleConnTimeout,
			}
			if cfg.ResponseHeaderTimeout > 0 {
				rt.ResponseHeaderTimeout = cfg.ResponseHeaderTimeout
			}
			if secure == 1 {
				rt.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
			}
			t.rt[secure][upgrade] = rt
		}
	}
	return t, nil
}

// close closes the idle connections and the tunnels, and stops the lean
// client's sweeper.
func (t *ownTransport) close() {
	t.lean.close()
	for secure := range 2 {
		for upgrade := range 2 {
			t.rt[secure][upgrade].CloseIdleConnections()
		}
	}
	t.tunnels.closeAll()
}

// dialError is a failed connection to an instance: it sent nothing.
type dialError struct{ error }

func (e dialError) Unwrap() error { return e.error }

// dialer returns the transports' dial: within timeout, failures marked
// as dialError, and with readTimeout each read of the connection given
// that long (as reverse_proxy's read_timeout).
func dialer(timeout, readTimeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, dialError{err}
		}
		if readTimeout > 0 {
			return &readTimeoutConn{Conn: c, timeout: readTimeout}, nil
		}
		return c, nil
	}
}

// readTimeoutConn gives each read timeout to complete, counted from the
// read or from the last write, whichever came later: the transport reads
// (waiting for the answer) while it still sends the request, and an
// instance reading a long upload is not silent. (reverse_proxy's
// read_timeout counts from the read alone: an upload longer than it
// fails.)
type readTimeoutConn struct {
	net.Conn
	timeout time.Duration
}

func (c *readTimeoutConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *readTimeoutConn) Write(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// isDialError reports whether err is a failed connection to an instance.
func isDialError(err error) bool {
	var d dialError
	return errors.As(err, &d)
}
