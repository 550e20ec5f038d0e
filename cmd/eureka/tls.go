package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/eurekagate/eurekagate/internal/tlsfiles"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// tlsFlags are the TLS settings: what the server presents and requires, and
// what the node trusts and presents when it connects to its peers.
type tlsFlags struct {
	cert, key, clientCA, ca, peerCertNames string
	certPassword, clientCAPassword         string
	caPassword                             string
	gatewayCA                              string
}

func (t *tlsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.cert, "tls-cert", "", "PEM certificate chain to serve HTTPS with (with -tls-key), or a PKCS12 key store (.p12, .pfx) holding the key too (with -tls-cert-password); also presented to peers that require a client certificate. Reloaded when the file changes")
	fs.StringVar(&t.certPassword, "tls-cert-password", "", "password of the -tls-cert PKCS12 key store (server.ssl.key-store-password)")
	fs.StringVar(&t.clientCAPassword, "tls-client-ca-password", "", "password of the -tls-client-ca PKCS12 trust store (server.ssl.trust-store-password)")
	fs.StringVar(&t.key, "tls-key", "", "PEM private key of -tls-cert")
	fs.StringVar(&t.clientCA, "tls-client-ca", "", "PEM CA certificates, or a PKCS12 trust store (.p12, .pfx): every client must present a certificate they signed (mutual TLS)")
	fs.StringVar(&t.ca, "tls-ca", "", "PEM CA certificates, or a PKCS12 trust store (.p12, .pfx, with -tls-ca-password), that https:// peers' and remote regions' certificates must chain to (default: the system's roots)")
	fs.StringVar(&t.caPassword, "tls-ca-password", "", "password of the -tls-ca PKCS12 trust store")
	fs.StringVar(&t.gatewayCA, "gateway-trusted-ca", "", "PEM CA certificates that the certificates of instances reached on their secure port (those that enable only it) must chain to (default: the system's roots). Reloaded when the file changes")
	fs.StringVar(&t.peerCertNames, "peer-cert-names", "", "comma-separated common or DNS names of the peers' client certificates (with -tls-client-ca): such a certificate authenticates a peer like -peer-auth")
}

// apply builds the TLS configurations into o, loading the files.
func (t *tlsFlags) apply(o *options) error {
	store := t.key == "" && tlsfiles.IsStore(t.cert, t.certPassword)
	if (t.cert == "") != (t.key == "") && !store {
		return errors.New("-tls-cert and -tls-key go together (or -tls-cert names a PKCS12 key store, .p12 or .pfx)")
	}
	if t.certPassword != "" && t.key != "" {
		return errors.New("-tls-cert-password is set with -tls-key: the password opens a PKCS12 key store, which holds its key")
	}
	if t.caPassword != "" && t.ca == "" {
		return errors.New("-tls-ca-password is set without -tls-ca: the password opens a PKCS12 trust store given to -tls-ca")
	}
	if t.cert == "" && t.clientCA != "" {
		return errors.New("-tls-client-ca needs -tls-cert and -tls-key: client certificates are asked for over HTTPS only")
	}
	if names := splitList(t.peerCertNames); len(names) > 0 {
		if t.clientCA == "" {
			return errors.New("-peer-cert-names needs -tls-client-ca, which verifies client certificates")
		}
		o.registry.API.Auth.PeerCertNames = names
	}
	if t.cert != "" {
		cfg, err := tlsfiles.Server(tlsfiles.Files{Cert: t.cert, Key: t.key, Password: t.certPassword, CA: t.clientCA, CAPassword: t.clientCAPassword})
		if err != nil {
			return err
		}
		o.server.TLS = cfg
	}
	if t.cert != "" || t.ca != "" {
		cfg, err := tlsfiles.Client(tlsfiles.Files{CA: t.ca, CAPassword: t.caPassword, Cert: t.cert, Key: t.key, Password: t.certPassword})
		if err != nil {
			return err
		}
		o.registry.Peers.TLS = cfg
	}
	if t.gatewayCA != "" {
		cfg, err := httpapi.ClientTLSFiles(t.gatewayCA, "", "")
		if err != nil {
			return fmt.Errorf("-gateway-trusted-ca: %v", err)
		}
		o.gateway.TLS = cfg
	}
	return nil
}
