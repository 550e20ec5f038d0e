package fxmodules

import (
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// A registry and a client in one fx application: the client registers on
// start, the balancer picks it from the client's cache, and the client
// cancels on stop.
func TestDiscoveryAndBalancerModules(t *testing.T) {
	var srv *httpapi.Server
	var store *registry.Store
	reg := fxtest.New(t, Registry, Server,
		fx.Supply(httpapi.ServerConfig{Addr: "127.0.0.1:0"}), fx.Populate(&srv, &store))
	reg.RequireStart()
	defer reg.RequireStop()

	var client *discovery.Client
	var bal *balancer.Balancer
	app := fxtest.New(t, Discovery, RemoteInstances, Balancer,
		fx.Supply(discovery.Config{
			ServiceURLs:           []string{"http://" + srv.Addr().String() + "/eureka/"},
			RegistryFetchInterval: 50 * time.Millisecond,
			Instance:              &discovery.InstanceConfig{AppName: "orders", Port: 7000},
		}),
		fx.Populate(&client, &bal))
	app.RequireStart()
	testkit.Eventually(t, 5*time.Second, "the client to see its own registration", func() bool { _, err := bal.Pick("ORDERS"); return err == nil })
	if i, _ := bal.Pick("ORDERS"); i.Port.Number != 7000 {
		t.Fatalf("picked %+v", i)
	}
	self, _ := client.Instance()
	if _, ok := store.Get("ORDERS", self.InstanceID); !ok {
		t.Fatalf("%s is not registered", self.InstanceID)
	}
	app.RequireStop()
	if _, ok := store.Get("ORDERS", self.InstanceID); ok {
		t.Fatal("the client did not cancel on stop")
	}
}

// Without a config the client defaults to Spring's service URL and
// registers nothing; without a balancer config the policy is round-robin.
func TestDiscoveryDefaultsAndLocalBalancer(t *testing.T) {
	var client *discovery.Client
	app := fxtest.New(t, Discovery, fx.Populate(&client))
	if _, ok := client.Instance(); ok {
		t.Error("a client without an Instance registers")
	}
	// Start and stop without a reachable server: nothing blocks, nothing leaks.
	app.RequireStart()
	app.RequireStop()

	var store *registry.Store
	var bal *balancer.Balancer
	local := fxtest.New(t, Registry, LocalInstances, Balancer, fx.Populate(&store, &bal))
	local.RequireStart()
	for _, id := range []string{"a", "b"} {
		store.Register(&eureka.InstanceInfo{InstanceID: id, HasInstanceID: true, HostName: id, App: "A", IPAddr: "127.0.0.1",
			Status: eureka.StatusUp, DataCenterInfo: eureka.DataCenterInfo{Name: "MyOwn"}}, false)
	}
	first, _ := bal.Pick("A")
	second, _ := bal.Pick("A")
	if first.ID() == second.ID() {
		t.Errorf("default policy is not round-robin: %s, %s", first.ID(), second.ID())
	}
	local.RequireStop()
}

// A balancer without an instance source is a wiring error fx reports.
func TestBalancerNeedsInstances(t *testing.T) {
	app := fx.New(Balancer, fx.Invoke(func(*balancer.Balancer) {}), fx.NopLogger)
	if app.Err() == nil {
		t.Fatal("a balancer without LocalInstances or RemoteInstances was built")
	}
}

// A bad service URL fails the application, not the first request.
func TestDiscoveryBadConfig(t *testing.T) {
	app := fx.New(Discovery, fx.Supply(discovery.Config{ServiceURLs: []string{"ftp://x"}}),
		fx.Invoke(func(*discovery.Client) {}), fx.NopLogger)
	if app.Err() == nil {
		t.Fatal("an invalid service URL was accepted")
	}
}
