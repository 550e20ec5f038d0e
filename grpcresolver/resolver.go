// Package grpcresolver resolves eureka:///orders for grpc-go from a
// discovery client, for Go services that call gRPC services registered
// in Eureka without xDS: the client's copy of the registry is read at
// once, and every change it learns (by its watch on our servers, by its
// fetches on others) updates the channel's addresses.
//
//	b := &grpcresolver.Builder{Client: client}
//	conn, err := grpc.NewClient("eureka:///orders", grpc.WithResolvers(b), ...)
//
// The addresses are the app's UP instances, on their gRPC port (see
// eureka.InstanceInfo.GRPCAddress); the channel balances over them with
// Policy.
package grpcresolver

import (
	"fmt"
	"net"
	"strconv"
	"sync"

	_ "google.golang.org/grpc/balancer/leastrequest" // registers least_request_experimental
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/serviceconfig"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
)

// Scheme is the target scheme: eureka:///orders.
const Scheme = "eureka"

// Balancer policies, the gRPC counterparts of the balancer package's.
const (
	// PolicyRoundRobin is grpc-go's round_robin (balancer.RoundRobin).
	PolicyRoundRobin = "round_robin"
	// PolicyLeastRequest is grpc-go's least_request_experimental
	// (balancer.LeastRequests).
	PolicyLeastRequest = "least_request"
)

var policies = map[string]string{
	PolicyRoundRobin:   `{"loadBalancingConfig":[{"round_robin":{}}]}`,
	PolicyLeastRequest: `{"loadBalancingConfig":[{"least_request_experimental":{"choiceCount":2}}]}`,
}

// Builder builds resolvers of eureka:/// targets over a discovery client.
type Builder struct {
	// Client is the discovery client whose registry is read; its owner
	// starts and stops it. Required.
	Client *discovery.Client
	// GRPCPortKey is the metadata key of an instance's gRPC port. Default
	// "gRPC_port" (eureka.DefaultGRPCPortKey).
	GRPCPortKey string
	// Policy is the channel's balancer policy: "round_robin" or
	// "least_request". Default "round_robin".
	Policy string
}

// Scheme returns "eureka".
func (b *Builder) Scheme() string { return Scheme }

// Build starts resolving target's app: the path of eureka:///orders,
// in any case.
func (b *Builder) Build(target resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	if b.Client == nil {
		return nil, fmt.Errorf("grpcresolver: Builder.Client is nil")
	}
	policy := b.Policy
	if policy == "" {
		policy = PolicyRoundRobin
	}
	sc, ok := policies[policy]
	if !ok {
		return nil, fmt.Errorf("grpcresolver: Policy: %q is neither %q nor %q", policy, PolicyRoundRobin, PolicyLeastRequest)
	}
	app := eureka.AppName(target.Endpoint())
	if app == "" {
		return nil, fmt.Errorf("grpcresolver: %q names no app (eureka:///orders)", target.URL.String())
	}
	key := b.GRPCPortKey
	if key == "" {
		key = eureka.DefaultGRPCPortKey
	}
	r := &appResolver{client: b.Client, cc: cc, app: app, key: key, sc: cc.ParseServiceConfig(sc), stop: make(chan struct{})}
	changed := b.Client.Changed() // before the first update reads
	r.update()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			select {
			case <-r.stop:
				return
			case <-changed:
				changed = r.client.Changed() // before update reads
				r.update()
			}
		}
	}()
	return r, nil
}

// appResolver follows one app's instances.
type appResolver struct {
	client *discovery.Client
	cc     resolver.ClientConn
	app    string
	key    string
	sc     *serviceconfig.ParseResult

	mu   sync.Mutex // serializes updates
	sent bool       // a state was sent: last is the list it came from
	last eureka.ListID
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// update hands the app's addresses to the channel when its instances
// changed.
func (r *appResolver) update() {
	r.mu.Lock()
	defer r.mu.Unlock()
	up := r.client.Instances(r.app)
	// An app with no instance is sent its empty state once: every empty
	// list has the same ListID.
	id := eureka.ListIDOf(up)
	if r.sent && id == r.last {
		return
	}
	r.sent, r.last = true, id
	state := resolver.State{ServiceConfig: r.sc, Endpoints: []resolver.Endpoint{}}
	for _, i := range up {
		if host, port, ok := i.GRPCAddress(r.key); ok {
			addr := net.JoinHostPort(host, strconv.Itoa(port))
			state.Endpoints = append(state.Endpoints, resolver.Endpoint{Addresses: []resolver.Address{{Addr: addr}}})
		}
	}
	// An error here is the channel's to report (no address to use); the
	// next change updates it again.
	_ = r.cc.UpdateState(state)
}

// ResolveNow reads the client's registry again.
func (r *appResolver) ResolveNow(resolver.ResolveNowOptions) { r.update() }

// Close stops following the app and waits for its goroutine.
func (r *appResolver) Close() {
	r.once.Do(func() { close(r.stop) })
	r.wg.Wait()
}
