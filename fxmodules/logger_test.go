package fxmodules

import (
	"testing"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

// The Registry module's lines are named eureka.registry, whether the
// application's logger has no name or is already named eureka (Caddy's
// eureka app logger), never eureka.eureka.registry.
func TestModuleLoggerName(t *testing.T) {
	for _, base := range []string{"", "eureka"} {
		core, logs := observer.New(zap.InfoLevel)
		log := zap.New(core)
		if base != "" {
			log = log.Named(base)
		}
		var store *registry.Store
		app := fxtest.New(t, Registry, fx.Supply(log), fx.Populate(&store))
		app.RequireStart()
		store.Register(&eureka.InstanceInfo{InstanceID: "a", HasInstanceID: true, HostName: "a", App: "A", IPAddr: "127.0.0.1",
			Status: eureka.StatusUp, DataCenterInfo: eureka.DataCenterInfo{Name: "MyOwn"}}, false)
		app.RequireStop()
		if logs.Len() == 0 {
			t.Fatalf("logger %q: nothing logged", base)
		}
		for _, e := range logs.All() {
			if e.LoggerName != "eureka.registry" {
				t.Errorf("logger %q: line %q is named %q, want eureka.registry", base, e.Message, e.LoggerName)
			}
		}
	}
}
