package registry_test

import (
	"context"
	"fmt"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

// registration is an UP instance of app listening on 127.0.0.1:port.
func registration(app, id string, port int) *eureka.InstanceInfo {
	return &eureka.InstanceInfo{
		InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", IPAddr: "127.0.0.1", App: app,
		Status: eureka.StatusUp, Port: eureka.Port{Number: port, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
		LeaseInfo:      eureka.LeaseInfo{RenewalIntervalInSecs: 30, DurationInSecs: 90},
	}
}

// A Store used in-process: register an instance, renew its lease as its
// heartbeat would, and read the UP instances of its app, as a gateway
// does on every request.
func ExampleStore() {
	store := registry.New(registry.Config{})
	store.Start() // eviction, delta retention, threshold recount
	defer store.Stop()

	if err := store.Register(registration("orders", "orders-1", 8081), false); err != nil {
		fmt.Println(err)
		return
	}
	res, _ := store.Renew("ORDERS", "orders-1", registry.RenewRequest{})
	fmt.Println("renewed:", res == registry.RenewOK)

	for _, i := range store.Instances("ORDERS") { // app names are upper case
		fmt.Println(i.App, i.ID(), i.Status, i.Port.Number)
	}
	// Output:
	// renewed: true
	// ORDERS orders-1 UP 8081
}

// The change stream: every write that changes what a read returns is
// delivered to subscribers in order, with the next version.
func ExampleStore_Subscribe() {
	store := registry.New(registry.Config{})
	unsubscribe := store.Subscribe(func(c registry.Change) {
		fmt.Println(c.Version, c.Kind, c.App, c.ID)
	})
	defer unsubscribe()

	store.Register(registration("orders", "orders-1", 8081), false)
	store.Renew("ORDERS", "orders-1", registry.RenewRequest{}) // a plain heartbeat is not a change
	store.Cancel("ORDERS", "orders-1", false)
	// Output:
	// 1 registered ORDERS orders-1
	// 2 cancelled ORDERS orders-1
}

// Poll returns at once when the Store already has a change newer than the
// caller's version, and otherwise waits for one, as a long-polling client
// does.
func ExampleStore_Poll() {
	store := registry.New(registry.Config{})
	store.Register(registration("orders", "orders-1", 8081), false)
	store.Register(registration("orders", "orders-2", 8082), false)

	// A caller at version 0 is behind: Poll does not wait.
	polled := store.Poll(context.Background(), registry.Poll{Wait: time.Minute})
	fmt.Println(polled.Version.Local, len(polled.Changes))

	// A caller up to date waits for the next change.
	done := make(chan struct{})
	go func() {
		defer close(done)
		store.Cancel("ORDERS", "orders-1", false)
	}()
	polled = store.Poll(context.Background(), registry.Poll{Since: polled.Version, Wait: time.Minute})
	fmt.Println(polled.Version.Local, len(polled.Changes))
	<-done
	// Output:
	// 2 2
	// 3 1
}
