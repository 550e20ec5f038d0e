package caddymodule

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/caddyserver/caddy/v2"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/replication"
)

func init() {
	caddy.RegisterModule(new(adminAPI))
}

// adminAPI serves GET /eureka/ on Caddy's admin API: a read-only summary of
// the eureka app's registry (instances by application and status, and the
// self-preservation state), for operators and debugging.
type adminAPI struct {
	app *App
}

// CaddyModule returns the Caddy module information.
func (*adminAPI) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "admin.api.eureka", New: func() caddy.Module { return new(adminAPI) }}
}

// Provision finds the eureka app, if the config has one.
func (a *adminAPI) Provision(ctx caddy.Context) error {
	v, err := ctx.AppIfConfigured("eureka")
	if err == nil {
		a.app, _ = v.(*App)
	}
	return nil
}

// Routes returns the admin routes.
func (a *adminAPI) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{{Pattern: "/eureka/", Handler: caddy.AdminHandlerFunc(a.summary)}}
}

// summary is the document of GET /eureka/.
type summary struct {
	Registry         string                     `json:"registry"`
	Mode             string                     `json:"mode"`
	Instances        int                        `json:"instances"`
	Applications     map[string]map[string]int  `json:"applications"`
	SelfPreservation *registry.SelfPreservation `json:"self_preservation,omitempty"`
	Peers            []replication.PeerStats    `json:"peers,omitempty"`
	Remote           []string                   `json:"remote,omitempty"`
}

func (a *adminAPI) summary(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: errors.New("the eureka admin route is read-only")}
	}
	if a.app == nil {
		return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: errors.New("no eureka app in the running config")}
	}
	s := summary{Registry: a.app.Registry, Mode: "local", Applications: map[string]map[string]int{}}
	var apps []*registryApp
	if store := a.app.Store(); store != nil {
		sp := store.Stats().SelfPreservation()
		s.SelfPreservation = &sp
		s.Peers = a.app.entry.peers.Stats()
		apps = appsOf(store.Applications().Applications)
	} else {
		s.Mode, s.Remote = "remote", a.app.Remote
		apps = appsOf(a.app.Client().Applications().Applications)
	}
	for _, app := range apps {
		s.Applications[app.name] = app.byStatus
		s.Instances += app.count
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(s)
}

// Interface guards
var (
	_ caddy.Provisioner = (*adminAPI)(nil)
	_ caddy.AdminRouter = (*adminAPI)(nil)
)
