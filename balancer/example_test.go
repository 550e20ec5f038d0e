package balancer_test

import (
	"fmt"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
)

// instancer is an in-memory registry: the UP instances of each app.
type instancer map[string][]*eureka.InstanceInfo

func (m instancer) Instances(app string) []*eureka.InstanceInfo { return m[app] }

// A Balancer over any Instancer (the discovery Client, the registry Store,
// or a map as here) takes an app's instances in turn.
func ExampleBalancer() {
	var orders []*eureka.InstanceInfo
	for n := range 3 {
		orders = append(orders, &eureka.InstanceInfo{
			InstanceID: fmt.Sprintf("orders-%d", n+1), HostName: "127.0.0.1", App: "ORDERS",
			Status: eureka.StatusUp, Port: eureka.Port{Number: 8081 + n, Enabled: true},
		})
	}
	b := balancer.New(instancer{"ORDERS": orders}, balancer.Config{})
	for range 6 {
		inst, err := b.Pick("ORDERS")
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(inst.ID(), balancer.Address(inst, false))
	}
	// Output:
	// orders-1 127.0.0.1:8081
	// orders-2 127.0.0.1:8082
	// orders-3 127.0.0.1:8083
	// orders-1 127.0.0.1:8081
	// orders-2 127.0.0.1:8082
	// orders-3 127.0.0.1:8083
}
