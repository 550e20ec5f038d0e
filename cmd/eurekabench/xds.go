package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	grpcxds "google.golang.org/grpc/xds"
	"google.golang.org/protobuf/proto"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/internal/xdsfixture"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/xds"
)

// The xds study: how fast a registry change reaches grpc-go's own xDS
// client's RPCs, and what one change costs at scale.

type xdsConfig struct {
	trials    int // registration and cancel trials
	instances int // registry size for the cost per change
	apps      int
	changes   int // changes timed at scale
}

func xdsCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	c := xdsConfig{trials: 50, instances: 100_000, apps: 1_000, changes: 200}
	fs.IntVar(&c.trials, "trials", c.trials, "registrations (and cancels) timed through grpc-go's xDS client")
	fs.IntVar(&c.instances, "instances", c.instances, "registry size for the cost of one change")
	fs.IntVar(&c.apps, "apps", c.apps, "apps the instances are spread over")
	fs.IntVar(&c.changes, "changes", c.changes, "changes timed at that size")
	return func(out io.Writer, rec *record) error { return runXDS(c, out, rec) }
}

// runXDS times the reach and the cost of a change, printing and
// recording each.
func runXDS(c xdsConfig, out io.Writer, rec *record) error {
	m := meter{rec: rec}
	end := m.phase("registrations and cancels")
	reg, cancel, err := xdsReach(c.trials)
	end()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "through grpc-go's xDS client (xds:///orders), %d trials, server and client in this process:\n", c.trials)
	for _, r := range []struct {
		what string
		l    latencies
		key  string
	}{{"registration to the first RPC reaching it", summarize(reg), "registration"}, {"cancel to the last RPC reaching it", summarize(cancel), "cancel"}} {
		fmt.Fprintf(out, "  %-44s p50 %v  p99 %v  max %v\n", r.what, r.l.p50, r.l.p99, r.l.max)
		addLatencies(rec, r.key, r.l)
	}
	for _, size := range []struct{ instances, apps int }{{c.instances / 10, c.apps / 10}, {c.instances, c.apps}} {
		end := m.phase(fmt.Sprintf("changes at %d instances", size.instances))
		cost, err := xdsChangeCost(size.instances, size.apps, c.changes)
		end()
		if err != nil {
			return err
		}
		key := fmt.Sprintf("change.%d", size.instances)
		rec.add(key+".bytes", cost.bytesPerChange, "B")
		rec.add(key+".initial_bytes", float64(cost.initialBytes), "B")
		rec.add(key+".cpu", float64(cost.cpuPerChange)/1e3, "µs")
		fmt.Fprintf(out, "one change at %d instances over %d apps, a delta client watching every app's endpoints: %.0f B sent per change (the whole: %.1f MB), %v CPU per change (server and client)\n",
			size.instances, size.apps, cost.bytesPerChange, float64(cost.initialBytes)/1e6, cost.cpuPerChange.Round(time.Microsecond))
	}
	return nil
}

// xdsReach times, trials times, a registration until grpc-go's xDS client
// sends an RPC to the new instance, and its cancel until the last RPC
// that reached it.
func xdsReach(trials int) (reg, cancel []time.Duration, err error) {
	store := registry.New(registry.Config{})
	server, err := xds.New(store, xds.Config{})
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	server.Start(ln)
	defer server.Stop()

	register := func(id, name string) (func(), error) {
		port, stop, err := xdsfixture.StartBackend(name)
		if err != nil {
			return nil, err
		}
		i := fixture.Inst("ORDERS", id)
		i.Metadata = map[string]string{eureka.DefaultGRPCPortKey: strconv.Itoa(port)}
		return stop, store.Register(i, false)
	}
	stopBase, err := register("base", "base")
	if err != nil {
		return nil, nil, err
	}
	defer stopBase()
	builder, err := grpcxds.NewXDSResolverWithConfigForTesting(xdsfixture.Bootstrap(ln.Addr().String(), `{"type":"insecure"}`, "eurekabench"))
	if err != nil {
		return nil, nil, err
	}
	conn, err := grpc.NewClient("xds:///orders", grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithResolvers(builder))
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	if _, err := xdsfixture.Who(conn, 10*time.Second); err != nil {
		return nil, nil, fmt.Errorf("the first RPC: %w", err)
	}
	for n := range trials {
		name := "new-" + strconv.Itoa(n)
		start := time.Now()
		stop, err := register(name, name)
		if err != nil {
			return nil, nil, err
		}
		if err := untilReached(conn, name, 10*time.Second); err != nil {
			stop()
			return nil, nil, err
		}
		reg = append(reg, time.Since(start))

		start = time.Now()
		store.Cancel("ORDERS", name, false)
		last, err := lastReached(conn, name, 200)
		stop()
		if err != nil {
			return nil, nil, err
		}
		cancel = append(cancel, max(last.Sub(start), 0))
	}
	return reg, cancel, nil
}

// untilReached calls until an RPC reaches name.
func untilReached(conn *grpc.ClientConn, name string, within time.Duration) error {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); {
		if got, err := xdsfixture.Who(conn, time.Second); err == nil && got == name {
			return nil
		}
	}
	return fmt.Errorf("no RPC reached %s within %v", name, within)
}

// lastReached calls until quiet RPCs in a row miss name, and returns
// when the last one that reached it was sent.
func lastReached(conn *grpc.ClientConn, name string, quiet int) (time.Time, error) {
	var last time.Time
	for missed := 0; missed < quiet; {
		at := time.Now()
		got, err := xdsfixture.Who(conn, time.Second)
		if err != nil {
			return last, err
		}
		if got == name {
			last, missed = at, 0
		} else {
			missed++
		}
	}
	return last, nil
}

type xdsCost struct {
	initialBytes   int
	bytesPerChange float64
	cpuPerChange   time.Duration
}

// xdsChangeCost fills a registry, has a delta client watch every app's
// endpoints, then registers changes instances one at a time, each in
// another app, and measures what each sends and costs.
func xdsChangeCost(instances, apps, changes int) (xdsCost, error) {
	var cost xdsCost
	store := registry.New(registry.Config{})
	names := make([]string, apps)
	for a := range apps {
		names[a] = "APP-" + strconv.Itoa(a)
	}
	for n := range instances {
		i := fixture.SampleInstance(n)
		i.App = names[n%apps]
		if err := store.Register(i, false); err != nil {
			return cost, err
		}
	}
	server, err := xds.New(store, xds.Config{})
	if err != nil {
		return cost, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return cost, err
	}
	server.Start(ln)
	defer server.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		return cost, err
	}
	defer conn.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	stream, err := discoverygrpc.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		return cost, err
	}
	recv := func() (int, error) {
		r, err := stream.Recv()
		if err != nil {
			return 0, err
		}
		return proto.Size(r), stream.Send(&discoverygrpc.DeltaDiscoveryRequest{TypeUrl: r.TypeUrl, ResponseNonce: r.Nonce})
	}
	if err := stream.Send(&discoverygrpc.DeltaDiscoveryRequest{Node: &corev3.Node{Id: "eurekabench"}, TypeUrl: resourcev3.EndpointType, ResourceNamesSubscribe: names}); err != nil {
		return cost, err
	}
	if cost.initialBytes, err = recv(); err != nil {
		return cost, err
	}
	var sent int
	cpu0 := cpuTime()
	for n := range changes {
		i := fixture.SampleInstance(instances + n)
		i.App = names[n%apps]
		if err := store.Register(i, false); err != nil {
			return cost, err
		}
		size, err := recv()
		if err != nil {
			return cost, err
		}
		sent += size
	}
	cost.cpuPerChange = (cpuTime() - cpu0) / time.Duration(changes)
	cost.bytesPerChange = float64(sent) / float64(changes)
	return cost, nil
}
