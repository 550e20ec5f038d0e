package discovery

import (
	"crypto/tls"

	"github.com/eurekagate/eurekagate/internal/tlsfiles"
)

// TLSFiles returns a TLS configuration for Config.TLS from PEM files: caFile
// holds the CAs that servers' certificates must chain to (empty: the
// system's roots); certFile and keyFile, if set, are the client certificate
// presented to servers that require one (mutual TLS). The client
// certificate is reloaded when its files change on disk, checked at most
// once a second at handshake time; the CA file is read once. TLS 1.2 is the
// minimum. Errors name the file that does not load.
func TLSFiles(caFile, certFile, keyFile string) (*tls.Config, error) {
	return tlsfiles.Client(tlsfiles.Files{CA: caFile, Cert: certFile, Key: keyFile})
}
