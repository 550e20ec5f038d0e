package discovery_test

import (
	"context"
	"fmt"
	"time"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// A Client registers an instance with a Eureka server and reads it back
// from its local copy of the registry. The server here is this module's
// own, run in-process on a free loopback port.
func ExampleClient() {
	store := registry.New(registry.Config{})
	store.Start()
	defer store.Stop()
	server := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	if err := server.Start(); err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		server.Stop(ctx)
	}()

	client, err := discovery.New(discovery.Config{
		ServiceURLs: []string{"http://" + server.Addr().String() + "/eureka/"},
		Instance:    &discovery.InstanceConfig{AppName: "orders", HostName: "127.0.0.1", IPAddr: "127.0.0.1", Port: 8080},
		// This example refreshes the local registry itself, with Refresh;
		// without DisableFetch the client does so every
		// RegistryFetchInterval.
		DisableFetch: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	client.Start() // registers at once, then heartbeats every 30 s
	defer func() {
		// Stop cancels the registration (DELETE) before the server stops.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		client.Stop(ctx)
	}()

	// The registration is asynchronous: refresh until it shows.
	for deadline := time.Now().Add(5 * time.Second); len(client.Instances("ORDERS")) == 0 && time.Now().Before(deadline); {
		if err := client.Refresh(); err != nil {
			fmt.Println(err)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, i := range client.Instances("ORDERS") {
		fmt.Println(i.App, i.ID(), i.Status, i.IPAddr, i.Port.Number)
	}
	// Output:
	// ORDERS 127.0.0.1:orders:8080 UP 127.0.0.1 8080
}
