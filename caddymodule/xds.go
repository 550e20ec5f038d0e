package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/dashboard"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/xds"
)

// XDS is the eureka app's xDS server (the app's xds option), as
// cmd/eureka's -xds flags make it: Envoy and gRPC clients with an xDS
// resolver read the registry from it, app ORDERS as xds:///orders
// (docs/grpc-and-envoy.md). Served beyond loopback without
// TLSClientCA, it is logged at Warn at start: a stream carries the whole
// topology to whoever connects. In remote mode it serves the registry the app
// reads (the bridge). It listens while the config runs; a reload hands
// its address to the next config's server, and the clients reconnect.
//
// Caddyfile:
//
//	eureka {
//		xds <listen address> {
//			tls_cert <PEM file>
//			tls_key <PEM file>
//			tls_client_ca <PEM file>
//			policy round_robin|least_request|ring_hash
//			grpc_port_key <metadata key>
//			instance_ca <certificate provider instance>
//		}
//	}
type XDS struct {
	// Listen is the address the server listens on (":18000"). Required.
	Listen string `json:"listen"`
	// TLSCert and TLSKey are PEM files of the certificate chain and key
	// to serve xDS over TLS with, reloaded when they change. Default:
	// plaintext.
	TLSCert string `json:"tls_cert,omitempty"`
	TLSKey  string `json:"tls_key,omitempty"`
	// TLSClientCA is a PEM file of CA certificates: every client must
	// present a certificate they signed (mutual TLS; a stream carries the
	// whole topology). Needs TLSCert. Default: none.
	TLSClientCA string `json:"tls_client_ca,omitempty"`
	// Policy is every cluster's load balancing policy: round_robin,
	// least_request or ring_hash. Default: round_robin.
	Policy string `json:"policy,omitempty"`
	// GRPCPortKey is the instance metadata key whose port number is an
	// endpoint's port instead of the instance's port. Default: gRPC_port.
	GRPCPortKey string `json:"grpc_port_key,omitempty"`
	// InstanceCA names the clients' certificate provider instance whose
	// CA certificates verify the instances that enable only their secure
	// port (xds.Config.InstanceCA). Default: eureka_instances.
	InstanceCA string `json:"instance_ca,omitempty"`
}

// config checks x and returns the server's settings, naming the option
// at fault.
func (x *XDS) config() (xds.Config, error) {
	cfg := xds.Config{Policy: x.Policy, GRPCPortKey: x.GRPCPortKey, InstanceCA: x.InstanceCA}
	switch {
	case x.Listen == "":
		return cfg, errors.New("xds: listen is empty: the xDS server needs an address to listen on, such as xds :18000")
	case (x.TLSCert == "") != (x.TLSKey == ""):
		return cfg, fmt.Errorf("xds: tls_cert %q and tls_key %q go together: give both, or neither", x.TLSCert, x.TLSKey)
	case x.TLSCert == "" && x.TLSClientCA != "":
		return cfg, errors.New("xds: tls_client_ca needs tls_cert and tls_key: client certificates are asked for over TLS only")
	}
	if _, err := caddy.ParseNetworkAddress(x.Listen); err != nil {
		return cfg, fmt.Errorf("xds: listen %q: %v", x.Listen, err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("xds: policy %q is none of round_robin, least_request, ring_hash", x.Policy)
	}
	return cfg, nil
}

// checkXDS checks the xds option.
func (a *App) checkXDS() error {
	if a.XDS == nil {
		return nil
	}
	_, err := a.XDS.config()
	return err
}

// provisionXDS makes the xDS server of the app's registry (it listens
// from Start), its metrics (<namespace>_xds_*) in the config's registry.
func (a *App) provisionXDS(ctx caddy.Context) error {
	if a.XDS == nil {
		return nil
	}
	cfg, err := a.XDS.config()
	if err != nil {
		return err
	}
	if a.XDS.TLSCert != "" {
		if cfg.TLS, err = httpapi.TLSFiles(a.XDS.TLSCert, a.XDS.TLSKey, a.XDS.TLSClientCA); err != nil {
			return fmt.Errorf("xds: %v", err)
		}
	}
	cfg.Logger = a.log.Named("xds")
	var src xds.Source = a.entry.store
	if a.entry.store == nil {
		src = a.entry.client
	}
	a.xds, err = xds.New(src, cfg)
	if err != nil {
		return fmt.Errorf("xds: %v", err)
	}
	if err := ctx.GetMetricsRegistry().Register(a.xds.Collector("eureka")); err != nil {
		return fmt.Errorf("registering metrics: %v", err)
	}
	return nil
}

// startXDS listens on the xDS address, through Caddy's listener pool so
// that a reload's next config binds it while this one still runs.
func (a *App) startXDS() error {
	if a.xds == nil {
		return nil
	}
	na, err := caddy.ParseNetworkAddress(a.XDS.Listen)
	if err != nil {
		return fmt.Errorf("xds: listen %q: %v", a.XDS.Listen, err)
	}
	ln, err := na.Listen(context.Background(), 0, net.ListenConfig{})
	if err != nil {
		return fmt.Errorf("xds: %v", err)
	}
	if a.XDS.exposed() {
		a.log.Warn("the xDS server listens beyond loopback without mutual TLS: anyone who reaches it reads every instance's address; set tls_cert, tls_key and tls_client_ca in the xds block",
			zap.String("listen", a.XDS.Listen))
	}
	a.xds.Start(ln.(net.Listener))
	return nil
}

// exposed reports whether x's server is open to whoever reaches it
// beyond loopback: it asks for no client certificate and listens on an
// address other than loopback's.
func (x *XDS) exposed() bool {
	if x.TLSClientCA != "" {
		return false
	}
	na, err := caddy.ParseNetworkAddress(x.Listen)
	if err != nil || na.Host == "localhost" {
		return err != nil
	}
	ip := net.ParseIP(na.Host)
	return ip == nil || !ip.IsLoopback()
}

// stopXDS stops the xDS server, closing its clients' streams, and waits
// for it; a server that never started is let go.
func (a *App) stopXDS() {
	if a.xds != nil {
		a.xds.Stop()
		a.xds = nil
	}
}

// dashboardXDS returns the clients of the app's xDS server for
// eureka_dashboard; nil (no list) without one.
func (a *App) dashboardXDS() func() []dashboard.XDSClient {
	if a.xds == nil {
		return nil
	}
	return dashboard.XDSClientsOf(a.xds.Clients)
}

// parseXDS reads the xds option: its address and its block.
func (a *App) parseXDS(d *caddyfile.Dispenser) error {
	x := &XDS{}
	if !d.NextArg() {
		return d.Err("xds takes the address to listen on, such as xds :18000")
	}
	x.Listen = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		switch d.Val() {
		case "tls_cert":
			err = oneArg(d, &x.TLSCert)
		case "tls_key":
			err = oneArg(d, &x.TLSKey)
		case "tls_client_ca":
			err = oneArg(d, &x.TLSClientCA)
		case "policy":
			err = oneArg(d, &x.Policy)
		case "grpc_port_key":
			err = oneArg(d, &x.GRPCPortKey)
		case "instance_ca":
			err = oneArg(d, &x.InstanceCA)
		default:
			err = d.Errf("unrecognized xds option %q", d.Val())
		}
		if err != nil {
			return err
		}
	}
	if _, err := x.config(); err != nil {
		return d.Err(err.Error())
	}
	a.XDS = x
	return nil
}
