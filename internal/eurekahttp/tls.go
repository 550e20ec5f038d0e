package eurekahttp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// probeTLS connects to rawURL's host and returns the TLS error the server
// sends within a short wait, if any.
func (c *Client) probeTLS(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	cfg := &tls.Config{}
	if c.cfg.TLS != nil {
		cfg = c.cfg.TLS.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: c.cfg.ConnectTimeout}, "tcp", host, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(250 * time.Millisecond))
	if _, err := conn.Read(make([]byte, 1)); err != nil && strings.Contains(err.Error(), "tls:") {
		return err
	}
	return nil
}

// explainTLS says why a TLS handshake failed, in front of err, when it
// did: the Error around it names the URL.
func (c *Client) explainTLS(rawURL string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, fasthttp.ErrConnectionClosed) && strings.HasPrefix(rawURL, "https://") {
		// fasthttp reports any error before the answer's first byte as a
		// closed connection, hiding the alert of a server that refused the
		// client's certificate after the handshake (TLS 1.3): ask again.
		if alert := c.probeTLS(rawURL); alert != nil {
			err = fmt.Errorf("%w (%w)", err, alert)
		}
	}
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
	)
	why := ""
	switch {
	case errors.As(err, &unknown):
		why = "the server's certificate is not signed by a CA this client trusts (configure its CA)"
	case errors.As(err, &hostname):
		why = "the server's certificate is not valid for this host name"
	case errors.As(err, &invalid):
		why = "the server's certificate is not valid (expired, not yet valid, or not for server use)"
	case errors.As(err, &record):
		why = "the server did not answer in TLS (does it serve plain HTTP? then use an http:// URL)"
	case strings.Contains(err.Error(), "remote error: tls:"):
		why = "the server refused the handshake (does it require a client certificate that this client lacks or that it does not trust?)"
	case strings.Contains(err.Error(), "tls:"):
		why = "the handshake failed"
	default:
		return err
	}
	return fmt.Errorf("TLS handshake failed: %s: %w", why, err)
}
