package eurekahttp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// explainTLS says why a TLS handshake failed, in front of err, when it
// did: the Error around it names the URL.
func explainTLS(err error) error {
	if err == nil {
		return nil
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
