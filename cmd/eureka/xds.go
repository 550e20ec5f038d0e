package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/dashboard"
	"github.com/eurekagate/eurekagate/fxmodules/xdsmodule"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/xds"
)

// xdsFlags are the xDS server's settings.
type xdsFlags struct {
	cfg                 xdsmodule.Config
	cert, key, clientCA string
	failover            string
}

func (x *xdsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&x.cfg.Addr, "xds", "", "listen address of the xDS server (ADS over gRPC, plaintext unless -xds-tls-cert): Envoy and gRPC clients with an xDS resolver read the registry from it, app ORDERS as xds:///orders (default: none)")
	fs.StringVar(&x.cert, "xds-tls-cert", "", "PEM certificate chain to serve xDS over TLS with (with -xds-tls-key). Reloaded when the file changes")
	fs.StringVar(&x.key, "xds-tls-key", "", "PEM private key of -xds-tls-cert")
	fs.StringVar(&x.clientCA, "xds-tls-client-ca", "", "PEM CA certificates: every xDS client must present a certificate they signed (mutual TLS; the stream carries the whole topology)")
	fs.StringVar(&x.cfg.Server.GRPCPortKey, "xds-grpc-port-key", xds.DefaultGRPCPortKey, "instance metadata key whose port number is an endpoint's port over xDS instead of the instance's port")
	fs.StringVar(&x.failover, "xds-failover-regions", "", "comma-separated remote regions (of -remote-regions), in order, whose instances an xDS client's RPCs go to when the local region has none, as lower-priority localities (default: none, the local region only)")
	fs.StringVar(&x.cfg.Server.InstanceCA, "xds-instance-ca", xds.DefaultInstanceCA, "name of the certificate provider instance, in the xDS clients' bootstrap, whose CA certificates verify the instances that enable only their secure port: their clusters carry TLS, the server name the instance's hostName")
	fs.StringVar(&x.cfg.Server.Policy, "xds-policy", xds.DefaultPolicy, "load balancing policy of every xDS cluster: round_robin, least_request or ring_hash")
}

// apply checks the flags and builds the TLS configuration.
func (x *xdsFlags) apply(o *options) error {
	if x.cfg.Addr == "" {
		if x.cert != "" || x.key != "" || x.clientCA != "" {
			return errors.New("an -xds-tls-* flag is set without -xds: the TLS is the xDS server's")
		}
		return nil
	}
	if err := x.cfg.Server.Validate(); err != nil {
		return fmt.Errorf("-xds-policy: %v", err)
	}
	if (x.cert == "") != (x.key == "") {
		return errors.New("-xds-tls-cert and -xds-tls-key go together")
	}
	if x.cert == "" && x.clientCA != "" {
		return errors.New("-xds-tls-client-ca needs -xds-tls-cert and -xds-tls-key: client certificates are asked for over TLS only")
	}
	if x.cert != "" {
		cfg, err := httpapi.TLSFiles(x.cert, x.key, x.clientCA)
		if err != nil {
			return fmt.Errorf("-xds-tls-cert: %v", err)
		}
		x.cfg.Server.TLS = cfg
	}
	o.xds = x.cfg
	return nil
}

// applyRegions reads -xds-failover-regions, once the remote regions are
// known.
func (x *xdsFlags) applyRegions(o *options) error {
	names := splitList(x.failover)
	if len(names) == 0 {
		return nil
	}
	if o.xds.Addr == "" {
		return errors.New("-xds-failover-regions is set without -xds: the regions are the xDS server's")
	}
	if err := remoteRegionList(o, "-xds-failover-regions", names); err != nil {
		return err
	}
	o.xds.Server.FailoverRegions = names
	return nil
}

// xdsModule is the xDS server when -xds is set, serving -gateway-rules'
// traffic rules when set. It warns when the server listens beyond
// loopback without mutual TLS (its streams carry the whole topology to
// whoever connects).
func xdsModule(o *options, log *zap.Logger) fx.Option {
	if o.xds.Addr == "" {
		return fx.Options()
	}
	if !mutualTLS(o.xds.Server.TLS) && !loopbackOnly(o.xds.Addr) {
		log.Warn("the xDS server listens beyond loopback without mutual TLS: anyone who reaches it reads every instance's address; set -xds-tls-cert, -xds-tls-key and -xds-tls-client-ca",
			zap.String("addr", o.xds.Addr))
	}
	cfg := o.xds
	cfg.Rules = o.gatewayRules
	return fx.Options(xdsmodule.Module, fx.Supply(cfg))
}

// mutualTLS reports whether tc requires a verified client certificate,
// itself or in the configuration it hands each client (as the reloading
// configurations of -xds-tls-* do).
func mutualTLS(tc *tls.Config) bool {
	if tc == nil {
		return false
	}
	if tc.GetConfigForClient != nil {
		if inner, err := tc.GetConfigForClient(&tls.ClientHelloInfo{}); err == nil && inner != nil {
			tc = inner
		}
	}
	return tc.ClientAuth == tls.RequireAndVerifyClientCert
}

// dashboardXDS returns x's clients as the dashboard lists them; nil (no
// list) without x.
func dashboardXDS(x *xds.Server) func() []dashboard.XDSClient {
	if x == nil {
		return nil
	}
	return dashboard.XDSClientsOf(x.Clients)
}
