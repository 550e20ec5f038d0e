package caddymodule

import (
	"github.com/eurekagate/eurekagate/internal/tlsfiles"
)

// clientTLS loads the TLS files of s into the remote client's and the
// peers' configurations, copies of those settings compare.
func clientTLS(s *settings) error {
	if s.tls == (tlsfiles.Files{}) {
		return nil
	}
	cfg, err := tlsfiles.Client(s.tls)
	if err != nil {
		return err
	}
	if s.remote != nil {
		remote := *s.remote
		remote.TLS = cfg
		s.remote = &remote
	}
	s.peers.TLS = cfg
	return nil
}
