package httpapi

// Who may write what (AuthConfig.Apps, CertApps, Operators): the one
// decision both front doors take through API.Serve, after a request's
// credentials are known to be good.
//
//   - a peer (Peer's credential or a PeerCertNames certificate) may write
//     anything, replication included;
//   - an operator may override the status of any app's instances, remove
//     overrides and cancel, each write audited;
//   - a bound account or certificate may write only instances of its
//     apps, register only under their names, and send no replication;
//   - any other account may write as it could before bindings existed.
//
// A refusal is 403 with a reason that names neither the instance's owner
// nor the credential, audited.

import (
	"crypto/x509"
	"net/http"
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry/audit"
)

// authz holds the bindings, compiled; nil when none is configured, which
// leaves every write as it was.
type authz struct {
	users     map[string]appSet
	certs     map[string]appSet
	operators map[string]bool
	audit     *audit.Log
}

func newAuthz(cfg AuthConfig) *authz {
	if len(cfg.Apps) == 0 && len(cfg.CertApps) == 0 && len(cfg.Operators) == 0 && cfg.Audit == nil {
		return nil
	}
	z := &authz{users: map[string]appSet{}, certs: map[string]appSet{}, operators: map[string]bool{}, audit: cfg.Audit}
	for u, apps := range cfg.Apps {
		z.users[u] = newAppSet(apps)
	}
	for c, apps := range cfg.CertApps {
		z.certs[c] = newAppSet(apps)
	}
	for _, op := range cfg.Operators {
		z.operators[op] = true
	}
	return z
}

// certName returns the name of a verified client certificate that is
// among names: its common name, else its first listed DNS name.
func certName(c *x509.Certificate, has func(string) bool) string {
	if cn := c.Subject.CommonName; cn != "" && has(cn) {
		return cn
	}
	for _, n := range c.DNSNames {
		if has(n) {
			return n
		}
	}
	return ""
}

// caller is who sent a request whose credentials were accepted.
type caller struct {
	name string // the account's user name or the certificate's name
	cert bool   // name is a certificate's
	peer bool
}

// callerOf identifies req's sender, as authenticator.role does: a peer's
// certificate, a bound certificate, then the basic credentials.
func (a *API) callerOf(req *Request) caller {
	if a.auth == nil { // the host authenticated the request (ExternalUsers)
		if n := a.boundCertName(req); n != "" {
			return caller{name: n, cert: true}
		}
		return caller{name: req.User}
	}
	if c := req.ClientCert; c != nil {
		if a.auth.peerCert(c) {
			return caller{peer: true}
		}
		if n := a.boundCertName(req); n != "" {
			return caller{name: n, cert: true}
		}
	}
	r, user := req.checked, req.checkedUser
	if !req.known {
		r, user = a.auth.whoIs(req.Authorization, req.Client)
	}
	switch r {
	case asPeer:
		return caller{peer: true}
	case asUser:
		return caller{name: user}
	}
	return caller{}
}

// boundCertName is the name under which req's verified certificate is
// bound (AuthConfig.CertApps), or "".
func (a *API) boundCertName(req *Request) string {
	if req.ClientCert == nil || len(a.authz.certs) == 0 {
		return ""
	}
	return certName(req.ClientCert, func(n string) bool { _, ok := a.authz.certs[n]; return ok })
}

// actionOf names a write for the audit trail.
func actionOf(ep endpoint, method string, replication bool) string {
	switch {
	case ep == epBatch || replication:
		return "replication"
	case ep == epApp:
		return "register"
	case ep == epInstance && method == http.MethodPut:
		return "renew"
	case ep == epInstance:
		return "cancel"
	case ep == epInstanceStatus && method == http.MethodPut:
		return "status"
	case ep == epInstanceStatus:
		return "delete-status"
	}
	return "metadata"
}

// operatorAction reports whether an operator may do action to any app.
func operatorAction(action string) bool {
	return action == "status" || action == "delete-status" || action == "cancel"
}

// Refusals' reasons: they name neither the instance's owner nor the
// credential, so that a refusal tells a client nothing about others.
const (
	refusedApp         = "this credential may not write instances of this application"
	refusedReplication = "replication is for the registry's peers"
)

// authorize decides a write whose credentials were accepted: ok if it may
// go on, and audited if it is the operator role's (the caller records it
// once answered, with record). A refusal is answered here and audited.
func (a *API) authorize(req *Request, r *route, resp *Response) (audited, ok bool) {
	c := a.callerOf(req)
	if c.peer {
		return false, true
	}
	z := a.authz
	action := actionOf(r.ep, req.Method, req.Replication)
	bound, isBound := z.users[c.name]
	if c.cert {
		bound, isBound = z.certs[c.name]
	}
	operator := !c.cert && z.operators[c.name]
	switch {
	case action == "replication" && (isBound || operator):
		a.refuse(req, r, resp, c, action, refusedReplication)
		return false, false
	case operator && operatorAction(action):
		return true, true
	case isBound && !bound.has(r.app):
		a.refuse(req, r, resp, c, action, refusedApp)
		return false, false
	}
	return false, true
}

// vipsAllowed refuses (403, audited) a bound credential's registration
// that names a VIP address outside its apps: Spring Cloud's
// DiscoveryClient finds a service by its VIP (spring.application.name),
// so such an instance would receive another app's traffic. Each entry of
// vipAddress and secureVipAddress (comma-separated) is matched as an app
// name is.
func (a *API) vipsAllowed(req *Request, r *route, resp *Response, inst *eureka.InstanceInfo) bool {
	c := a.callerOf(req)
	bound, isBound := a.authz.users[c.name]
	if c.cert {
		bound, isBound = a.authz.certs[c.name]
	}
	if c.peer || !isBound {
		return true
	}
	for _, list := range []string{inst.VIPAddress, inst.SecureVIPAddress} {
		for _, vip := range strings.Split(list, ",") {
			if vip != "" && !bound.has(strings.ToUpper(vip)) {
				a.refuse(req, r, resp, c, "register", refusedApp)
				return false
			}
		}
	}
	return true
}

// refuse answers 403 with reason and audits it. A heartbeat's 403 has no
// body, as its 404 has none: Java clients decode a heartbeat's body as an
// instance.
func (a *API) refuse(req *Request, r *route, resp *Response, c caller, action, reason string) {
	if action == "renew" {
		resp.empty(http.StatusForbidden)
	} else {
		resp.text(http.StatusForbidden, reason)
	}
	a.record(req, r, c, action, "refused", resp.Status)
}

// recordOperator audits an operator's write once answered.
func (a *API) recordOperator(req *Request, r *route, status int) {
	a.record(req, r, a.callerOf(req), actionOf(r.ep, req.Method, req.Replication), "done", status)
}

// recordAuthRefusal audits a write refused by the authentication step
// (replication claimed by an account that is not the peer) when the
// credential itself was good; wrong or missing credentials name no one
// and are not audited.
func (a *API) recordAuthRefusal(req *Request, r *route, status int) {
	if a.authz == nil || a.authz.audit == nil || status != http.StatusUnauthorized {
		return
	}
	if c := a.callerOf(req); c.name != "" {
		a.record(req, r, c, actionOf(r.ep, req.Method, req.Replication), "refused", status)
	}
}

func (a *API) record(req *Request, r *route, c caller, action, outcome string, status int) {
	if a.authz.audit == nil {
		return
	}
	e := audit.Entry{Action: action, App: r.app, Instance: r.id, Outcome: outcome, Status: status}
	if c.cert {
		e.Cert = c.name
	} else {
		e.Account = c.name
	}
	if req.Client.IsValid() {
		e.Source = req.Client.String()
	}
	a.authz.audit.Record(e)
}
