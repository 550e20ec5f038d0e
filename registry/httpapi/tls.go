package httpapi

import (
	"crypto/tls"

	"github.com/eurekagate/eurekagate/internal/tlsfiles"
)

// TLSFiles returns a server TLS configuration for ServerConfig.TLS from PEM
// files: certFile (the chain, leaf first) and keyFile are the server's
// certificate; clientCAFile, if set, makes every client present a
// certificate that it signed (mutual TLS), which AuthConfig.PeerCertNames
// can then take as the peer's identity. The files are reloaded when they
// change on disk, checked at most once a second at handshake time, so
// certificates rotate without a restart; a change that does not load (a
// key not yet written) keeps the files in use. TLS 1.2 is the minimum,
// with Go's default cipher suites. Errors name the file that does not load.
func TLSFiles(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	return tlsfiles.Server(tlsfiles.Files{Cert: certFile, Key: keyFile, CA: clientCAFile})
}

// ClientTLSFiles returns a client TLS configuration from PEM files, for
// a node's connections to its peers (replication.Config.TLS): caFile
// holds the CAs the peers' certificates must chain to (empty: the system's
// roots); certFile and keyFile, if set, are presented to peers that require
// a client certificate, and reloaded when they change. Errors name the file
// that does not load.
func ClientTLSFiles(caFile, certFile, keyFile string) (*tls.Config, error) {
	return tlsfiles.Client(tlsfiles.Files{CA: caFile, Cert: certFile, Key: keyFile})
}
