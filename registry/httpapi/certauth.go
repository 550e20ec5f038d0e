package httpapi

import (
	"crypto/tls"
	"crypto/x509"
	"slices"
)

// certAuth reports whether the API identifies peers, or accounts bound to
// apps, by their TLS client certificate, so front doors need to pass it.
func (a *API) certAuth() bool {
	return a.auth != nil && len(a.auth.cfg.PeerCertNames) > 0 || a.authz != nil && len(a.authz.certs) > 0
}

// verifiedCert returns the client's certificate if the server verified it.
func verifiedCert(cs *tls.ConnectionState) *x509.Certificate {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.PeerCertificates) == 0 {
		return nil
	}
	return cs.PeerCertificates[0]
}

// peerCert reports whether c names a peer (PeerCertNames).
func (a *authenticator) peerCert(c *x509.Certificate) bool {
	return len(a.cfg.PeerCertNames) > 0 && certName(c, func(n string) bool { return slices.Contains(a.cfg.PeerCertNames, n) }) != ""
}

// boundCert returns the name under which c is bound to apps (CertApps),
// or "".
func (a *authenticator) boundCert(c *x509.Certificate) string {
	if len(a.cfg.CertApps) == 0 {
		return ""
	}
	return certName(c, func(n string) bool { _, ok := a.cfg.CertApps[n]; return ok })
}

// role returns asPeer for a request with a peer's verified certificate,
// asUser for one with a certificate bound to apps (CertApps), else who
// its Authorization header is, with the user name it gives.
func (a *authenticator) role(req *Request) (role, string) {
	if c := req.ClientCert; c != nil {
		if a.peerCert(c) {
			return asPeer, ""
		}
		if a.boundCert(c) != "" {
			return asUser, ""
		}
	}
	return a.whoIs(req.Authorization, req.Client)
}

// peerRestricted reports whether only the peer may send replication.
func (a *authenticator) peerRestricted() bool {
	return a.cfg.Peer != nil || len(a.cfg.PeerCertNames) > 0
}
