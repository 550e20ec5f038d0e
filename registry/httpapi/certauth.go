package httpapi

import (
	"crypto/tls"
	"crypto/x509"
	"slices"
)

// certAuth reports whether the API identifies peers by their TLS client
// certificate, so front doors need to pass it.
func (a *API) certAuth() bool { return a.auth != nil && len(a.auth.cfg.PeerCertNames) > 0 }

// verifiedCert returns the client's certificate if the server verified it.
func verifiedCert(cs *tls.ConnectionState) *x509.Certificate {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.PeerCertificates) == 0 {
		return nil
	}
	return cs.PeerCertificates[0]
}

// role returns asPeer for a request with a peer's verified certificate,
// else who its Authorization header is.
func (a *authenticator) role(req *Request) role {
	if c := req.ClientCert; c != nil && len(a.cfg.PeerCertNames) > 0 {
		if slices.Contains(a.cfg.PeerCertNames, c.Subject.CommonName) && c.Subject.CommonName != "" {
			return asPeer
		}
		for _, name := range c.DNSNames {
			if slices.Contains(a.cfg.PeerCertNames, name) {
				return asPeer
			}
		}
	}
	return a.who(req.Authorization, req.Client)
}

// peerRestricted reports whether only the peer may send replication.
func (a *authenticator) peerRestricted() bool {
	return a.cfg.Peer != nil || len(a.cfg.PeerCertNames) > 0
}
