package httpapi

// What a host tells the bindings of a request it authenticated itself
// (Caddy), and what a page asks of them (MayWrite).

import (
	"context"
	"net/http"
	"net/netip"
)

type clientCtxKey struct{}

// Client is what a host's own handling established about a request
// before the API: the user its authentication gave (Caddy's
// {http.auth.user.id}) and the client's address after its trusted-proxy
// rule (Caddy's client_ip).
type Client struct {
	User string
	Addr netip.Addr
}

// WithClient returns ctx carrying c, which the net/http front door passes
// to the bindings and the audit trail (AuthConfig.ExternalUsers).
func WithClient(ctx context.Context, c Client) context.Context {
	return context.WithValue(ctx, clientCtxKey{}, c)
}

// clientOf is the Client WithClient put in ctx, and whether there is one.
func clientOf(ctx context.Context) (Client, bool) {
	c, ok := ctx.Value(clientCtxKey{}).(Client)
	return c, ok
}

// HasBindings reports whether the API decides who may write what
// (AuthConfig's Apps, CertApps, Operators or Audit), so that a host that
// authenticates users passes them (WithClient).
func (a *API) HasBindings() bool { return a.authz != nil }

// MayWrite tells what the credentials of r (its basic credentials, its
// verified client certificate, or the user a host established with
// WithClient) may write, for a page that shows only the actions they
// may take (the dashboard): limited false when every app's instances
// (an unbound account, a peer, no credential known yet: its first write
// asks for one); else apps, the names and patterns of its binding, and
// operator, whether it may override and cancel any app's instances.
func (a *API) MayWrite(r *http.Request) (apps []string, operator, limited bool) {
	if a.authz == nil {
		return nil, false, false
	}
	req := Request{Authorization: r.Header.Get(hdrAuthorization), Client: remoteAddr(r)}
	if a.certAuth() {
		req.ClientCert = verifiedCert(r.TLS)
	}
	if c, ok := clientOf(r.Context()); ok {
		req.User = c.User
		if c.Addr.IsValid() {
			req.Client = c.Addr
		}
	}
	c := a.callerOf(&req)
	bound, isBound := a.authz.users[c.name]
	if c.cert {
		bound, isBound = a.authz.certs[c.name]
	}
	if c.peer || !isBound {
		return nil, false, false
	}
	return bound.list, !c.cert && a.authz.operators[c.name], true
}
