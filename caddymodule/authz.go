package caddymodule

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/eurekagate/eurekagate/dashboard"
	"github.com/eurekagate/eurekagate/registry/audit"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// Authz is who may write what through eureka_server, the eureka app's
// options of httpapi.AuthConfig's bindings. Caddy authenticates (the
// site's basic_auth, its TLS client_auth); these name the users it
// establishes ({http.auth.user.id}) and the client certificates it
// verifies:
//
//	auth_apps <user> <apps...>              (repeatable; patterns with *)
//	auth_apps cert:<name> <apps...>         (a client certificate's common or DNS name)
//	auth_operators <users...>
//	audit_log <path>|stdout
//
// A bound user or certificate may register, renew, cancel and change the
// status and metadata only of its apps' instances, and send no
// replication (403 otherwise); a user without a binding keeps every right;
// an operator may override any app's status and cancel its instances.
type Authz struct {
	// AuthApps binds users, by the id Caddy's authentication gives them,
	// to the apps they may write (names, or patterns with *). Default:
	// none bound.
	AuthApps map[string][]string `json:"auth_apps,omitempty"`
	// AuthCertApps binds verified TLS client certificates, by common or
	// DNS name, to apps as AuthApps binds users. Default: none.
	AuthCertApps map[string][]string `json:"auth_cert_apps,omitempty"`
	// AuthOperators may override the status of any app's instances,
	// remove overrides and cancel them, each write audited. Default:
	// none.
	AuthOperators []string `json:"auth_operators,omitempty"`
	// AuditLog is where the audit trail goes, a JSON line per write
	// refused to a credential and per operator write: a file (appended
	// to, created 0600) or stdout. Default: none.
	AuditLog string `json:"audit_log,omitempty"`

	audit *audit.Log
}

// authConfig is the AuthConfig of the app's APIs.
func (z *Authz) authConfig() httpapi.AuthConfig {
	return httpapi.AuthConfig{ExternalUsers: true, Apps: z.AuthApps, CertApps: z.AuthCertApps, Operators: z.AuthOperators, Audit: z.audit}
}

// provisionAuthz checks the bindings and opens the audit log, which
// cleanupAuthz closes.
func (z *Authz) provisionAuthz() error {
	cfg := z.authConfig()
	if err := cfg.Check(); err != nil {
		return fmt.Errorf("eureka: %s", strings.NewReplacer("-auth-apps", "auth_apps", "-auth-operators", "auth_operators").Replace(err.Error()))
	}
	if z.AuditLog != "" {
		l, err := audit.Open(z.AuditLog)
		if err != nil {
			return fmt.Errorf("eureka: audit_log: %w", err)
		}
		z.audit = l
	}
	return nil
}

// cleanupAuthz closes the audit log, after the config's servers stopped.
func (z *Authz) cleanupAuthz() error {
	if z.audit == nil {
		return nil
	}
	return z.audit.Close()
}

// parseAuthz reads one of the Caddyfile options of Authz.
func (z *Authz) parseAuthz(d *caddyfile.Dispenser) error {
	switch opt := d.Val(); opt {
	case "auth_apps":
		args := d.RemainingArgs()
		if len(args) < 2 {
			return d.Errf("auth_apps needs a user (or cert:<name>) and at least one app: auth_apps orders ORDERS ORDERS-*")
		}
		m := &z.AuthApps
		name := args[0]
		if n, ok := strings.CutPrefix(name, "cert:"); ok {
			m, name = &z.AuthCertApps, n
		}
		if *m == nil {
			*m = map[string][]string{}
		}
		(*m)[name] = append((*m)[name], args[1:]...)
	case "auth_operators":
		args := d.RemainingArgs()
		if len(args) == 0 {
			return d.ArgErr()
		}
		z.AuthOperators = append(z.AuthOperators, args...)
	case "audit_log":
		return oneArg(d, &z.AuditLog)
	}
	return nil
}

// withClient passes the user Caddy's authentication established, and the
// client's address after Caddy's trusted_proxies, to the API's bindings
// and audit trail; a request through an API without bindings is left as
// it is.
func withClient(api *httpapi.API, r *http.Request) *http.Request {
	if !api.HasBindings() {
		return r
	}
	var c httpapi.Client
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		if v, ok := repl.Get("http.auth.user.id"); ok { // ReplaceAll would format the string anew
			c.User, _ = v.(string)
		}
	}
	if ip, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok {
		c.Addr, _ = netip.ParseAddr(ip)
	}
	return r.WithContext(httpapi.WithClient(r.Context(), c))
}

// The Spring configuration's eurekagate.auth.* (internal/springeureka)
// set the options left unset: a user's or certificate's binding that the
// Caddyfile does not make, the operators and the audit log if it names
// none.
func init() {
	springSetters["audit-log"] = stringSetter(func(a *App) *string { return &a.AuditLog })
	springSetters["auth-operators"] = func(a *App, v string) (bool, error) {
		if len(a.AuthOperators) > 0 {
			return false, nil
		}
		for _, op := range strings.Split(v, ",") {
			if op = strings.TrimSpace(op); op != "" {
				a.AuthOperators = append(a.AuthOperators, op)
			}
		}
		return true, nil
	}
	springSetters["auth-apps"] = func(a *App, v string) (bool, error) {
		name, apps, ok := strings.Cut(v, "=")
		if !ok {
			return false, fmt.Errorf("%q is not USER=APP[,APP...]", v)
		}
		m := &a.AuthApps
		if n, ok := strings.CutPrefix(name, "cert:"); ok {
			m, name = &a.AuthCertApps, n
		}
		if _, set := (*m)[name]; set {
			return false, nil
		}
		if *m == nil {
			*m = map[string][]string{}
		}
		(*m)[name] = strings.Split(apps, ",")
		return true, nil
	}
}

// dashboardPermissions tells eureka_dashboard what the user Caddy's
// authentication established may write; nil without bindings.
func (a *App) dashboardPermissions() func(*http.Request) *dashboard.Permissions {
	if len(a.AuthApps) == 0 && len(a.AuthCertApps) == 0 {
		return nil
	}
	api, err := a.API("")
	if err != nil {
		return nil
	}
	api.Close() // it serves no request, so holds no watch: asked only MayWrite
	return dashboard.PermissionsFrom(func(r *http.Request) ([]string, bool, bool) { return api.MayWrite(withClient(api, r)) })
}
