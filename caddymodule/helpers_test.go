package caddymodule

import (
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// provisionApp provisions a as a config load would, in a context of its
// own with the admin endpoint off, and returns what Provision returned;
// it fails the test if the context cannot be made.
func provisionApp(t *testing.T, a *App) error {
	t.Helper()
	ctx, err := caddy.ProvisionContext(&caddy.Config{Admin: &caddy.AdminConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	return a.Provision(ctx)
}

// eachHandler calls f with every handler named name in an adapted Caddy
// config decoded as JSON (any object whose "handler" is name), before it
// looks inside that handler.
func eachHandler(doc any, name string, f func(handler map[string]any)) {
	switch v := doc.(type) {
	case map[string]any:
		if v["handler"] == name {
			f(v)
		}
		for _, c := range v {
			eachHandler(c, name, f)
		}
	case []any:
		for _, c := range v {
			eachHandler(c, name, f)
		}
	}
}
