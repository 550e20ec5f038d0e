package main

import (
	"flag"
	"fmt"
	"strings"

	"go.uber.org/fx"

	"github.com/eurekagate/eurekagate/fxmodules"
	"github.com/eurekagate/eurekagate/registry/audit"
)

// authzFlags are who may write what: -auth-apps, -auth-operators and
// -audit-log (httpapi.AuthConfig's Apps, CertApps, Operators and Audit).
type authzFlags struct {
	apps      bindingsFlag
	operators string
}

func (z *authzFlags) register(fs *flag.FlagSet, o *options) {
	fs.Var(&z.apps, "auth-apps", "USER=APP[,APP...]: bind an account of -auth-users to the apps it may write (names, or patterns with *: ORDERS-*); cert:NAME=APP[,APP...] binds a client certificate's common or DNS name (with -tls-client-ca). Repeatable, or bindings separated by ;. A bound credential registers, renews, cancels and changes status and metadata only of its apps' instances, and sends no replication; an account without a binding keeps every right")
	fs.StringVar(&z.operators, "auth-operators", "", "comma-separated accounts of -auth-users that may override the status of any app's instances, remove overrides and cancel them (each such write audited)")
	fs.StringVar(&o.auditLog, "audit-log", "", "write the audit trail, a JSON line per write refused to a credential and per write of -auth-operators, to this file (appended to, created 0600) or to stdout; lines are dropped, and counted in eureka_audit_dropped_total, when the writer falls behind")
}

// apply sets the bindings into o's AuthConfig, which Check then checks
// against the accounts.
func (z *authzFlags) apply(o *options) {
	auth := &o.registry.API.Auth
	for _, b := range z.apps {
		if name, ok := strings.CutPrefix(b.name, "cert:"); ok {
			if auth.CertApps == nil {
				auth.CertApps = map[string][]string{}
			}
			auth.CertApps[name] = append(auth.CertApps[name], b.apps...)
			continue
		}
		if auth.Apps == nil {
			auth.Apps = map[string][]string{}
		}
		auth.Apps[b.name] = append(auth.Apps[b.name], b.apps...)
	}
	auth.Operators = append(auth.Operators, splitList(z.operators)...)
}

// checkTLS refuses certificate bindings on a server that verifies no
// client certificate: no certificate would ever match them.
func (z *authzFlags) checkTLS(t *tlsFlags) error {
	for _, b := range z.apps {
		if strings.HasPrefix(b.name, "cert:") && t.clientCA == "" {
			return fmt.Errorf("-auth-apps %s: a certificate binding needs -tls-client-ca, which verifies client certificates", b.name)
		}
	}
	return nil
}

// binding is one USER=APP[,APP...] of -auth-apps.
type binding struct {
	name string
	apps []string
}

// bindingsFlag is -auth-apps: repeatable, each value one or more bindings
// separated by ; (so that one variable, EUREKA_AUTH_APPS, may hold
// several).
type bindingsFlag []binding

func (f *bindingsFlag) String() string {
	var parts []string
	for _, b := range *f {
		parts = append(parts, b.name+"="+strings.Join(b.apps, ","))
	}
	return strings.Join(parts, ";")
}

func (f *bindingsFlag) Set(v string) error {
	for _, entry := range strings.Split(v, ";") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		name, apps, ok := strings.Cut(entry, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || name == "cert:" || len(splitList(apps)) == 0 {
			return fmt.Errorf("%q is not USER=APP[,APP...] or cert:NAME=APP[,APP...]", entry)
		}
		*f = append(*f, binding{name, splitList(apps)})
	}
	return nil
}

// auditOption opens -audit-log into the API's AuthConfig when the
// registry is built, and closes it when the application stops: its hook,
// appended before the server's, runs after the server has stopped, so
// the last requests' lines are written.
func auditOption(opts *options) fx.Option {
	if opts.auditLog == "" {
		return fx.Options()
	}
	return fx.Decorate(func(lc fx.Lifecycle, cfg fxmodules.RegistryConfig) (fxmodules.RegistryConfig, error) {
		l, err := audit.Open(opts.auditLog)
		if err != nil {
			return cfg, fmt.Errorf("-audit-log: %w", err)
		}
		lc.Append(fx.StopHook(func() error { return l.Close() }))
		cfg.API.Auth.Audit = l
		return cfg, nil
	})
}
