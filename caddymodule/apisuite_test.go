package caddymodule

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/eurekagate/eurekagate/internal/apisuite"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// The REST API served by eureka_server passes the same suite, and the same
// fargo interop test, as the standalone server.
func TestAPISuiteThroughCaddy(t *testing.T) { apisuite.Run(t, startThroughCaddy) }

func TestFargoThroughCaddy(t *testing.T) { apisuite.RunFargo(t, startThroughCaddy) }

// startThroughCaddy loads a config with a new registry (a fresh Store) and
// eureka_server on the registry port.
func startThroughCaddy(t *testing.T, cfg registry.Config, api httpapi.APIConfig) (string, *registry.Store) {
	t.Helper()
	if !reflect.DeepEqual(cfg, registry.Config{DisableDelta: cfg.DisableDelta}) {
		t.Fatalf("the Caddy starter does not map %+v", cfg)
	}
	name := newRegistry("suite")
	globals := "registry " + name
	if cfg.DisableDelta {
		globals += "\n\t\tdisable_delta"
	}
	if api.MaxBodyBytes > 0 {
		globals += fmt.Sprintf("\n\t\tmax_body_size %d", api.MaxBodyBytes)
	}
	server := ""
	if api.Prefix != "" {
		server = "prefix " + api.Prefix
	}
	loadConfig(t, testConfig("", globals,
		site(registryPort, "\teureka_server {\n\t\t"+server+"\n\t}\n\trespond 404")))
	v, ok := lookupEntry(name)
	if !ok {
		t.Fatalf("registry %s not running", name)
	}
	return "http://127.0.0.1:" + registryPort, v.store
}

func lookupEntry(name string) (*entry, bool) {
	var found *entry
	pool.Range(func(key, value any) bool {
		if key == name {
			found = value.(*entry)
			return false
		}
		return true
	})
	return found, found != nil
}
