package interop

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/xdstest"
	"github.com/eurekagate/eurekagate/xds"
)

// This file runs grpc-go's own xDS client (xds:///orders) against the
// instances Spring's Eureka client and ours register, through the bridge
// in front of Spring Cloud's Eureka server and through our own server's
// -xds.

// grpcSpringClient runs the Spring Boot client as ORDERS instance id
// against serviceURL with a Go gRPC backend named id on the port its
// eureka.instance.metadata-map.gRPC_port registers, as
// grpc-spring-boot-starter does.
func grpcSpringClient(t *testing.T, id, serviceURL string) *springClient {
	t.Helper()
	port := xdstest.Backend(t, id)
	return startSpringClient(t, "orders", id, serviceURL,
		"--eureka.instance.metadata-map."+eureka.DefaultGRPCPortKey+"="+strconv.Itoa(port))
}

// grpcGoClient registers ORDERS instance id with serviceURL through our
// discovery client, with a Go gRPC backend named id on its gRPC_port,
// until the test ends or the client is stopped (which cancels it).
func grpcGoClient(t *testing.T, id, serviceURL string) *discovery.Client {
	t.Helper()
	port := xdstest.Backend(t, id)
	c, _ := jsrvClient(t, discovery.Config{
		ServiceURLs:  []string{serviceURL},
		DisableFetch: true,
		Instance: &discovery.InstanceConfig{
			AppName: "ORDERS", InstanceID: id, HostName: "127.0.0.1", IPAddr: "127.0.0.1", Port: port,
			Metadata:             map[string]string{eureka.DefaultGRPCPortKey: strconv.Itoa(port)},
			LeaseRenewalInterval: time.Second, LeaseDuration: 10 * time.Second,
		},
	})
	return c
}

// The bridge in front of Spring Cloud's Eureka server, both ways
// docs/grpc-and-envoy.md has users run it (xds.New over a discovery
// client reading the server, and Caddy's eureka app in remote mode with
// its xds option): grpc-go's xDS client calling xds:///orders through
// either reaches the UP instances the Spring Boot client and ours
// registered there, on their gRPC_port; OUT_OF_SERVICE set on the Java
// server and a cancel stop its RPCs to that instance, a new registration
// gets some.
func TestXDSBridgeInFrontOfJavaServer(t *testing.T) {
	requireJava(t)
	java := jsrvStartServer(t)
	grpcSpringClient(t, "spring-1", java.base)
	goClient := grpcGoClient(t, "go-1", java.base)

	reader, _ := jsrvClient(t, discovery.Config{ServiceURLs: []string{java.base}, RegistryFetchInterval: time.Second})
	select {
	case <-reader.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("the bridge's client read no registry from the Java server within 30s")
	}
	bridge := xdstest.Serve(t, reader, xds.Config{})
	caddyXDS := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	jsrvCaddy(t, java.base, map[string]any{"xds": map[string]any{"listen": caddyXDS}}, nil)
	conns := map[string]*grpc.ClientConn{
		"xds.New over a discovery client": xdstest.Conn(t, xdstest.Bootstrap(bridge.Addr().String(), `{"type":"insecure"}`, t.Name()), "xds:///orders"),
		"Caddy's eureka app, remote mode": xdstest.Conn(t, xdstest.Bootstrap(caddyXDS, `{"type":"insecure"}`, t.Name()), "xds:///orders"),
	}
	reach := func(want ...string) {
		t.Helper()
		for name, conn := range conns {
			t.Logf("through %s", name)
			xdstest.EventuallyReaches(t, conn, want...)
		}
	}
	reach("go-1", "spring-1")

	// OUT_OF_SERVICE, set on the Java server (its status override).
	if code, body := call(t, "PUT", java.base+"apps/ORDERS/spring-1/status?value=OUT_OF_SERVICE", nil); code != 200 {
		t.Fatalf("OUT_OF_SERVICE on the Java server: %d %s", code, body)
	}
	reach("go-1")

	// A new registration gets RPCs; a cancel (our client stopping)
	// stops them to the instance it cancelled.
	grpcGoClient(t, "go-2", java.base)
	reach("go-1", "go-2")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := goClient.Stop(ctx); err != nil {
		t.Fatalf("cancel go-1: %v", err)
	}
	java.await(`Cancelled instance ORDERS/go-1`, 10*time.Second)
	reach("go-2")
}

// On our own server (cmd/eureka -xds), an instance the Spring Boot
// client registered with eureka.instance.metadata-map.gRPC_port is
// reached over xDS by grpc-go's client on that port.
func TestXDSReachesSpringClientOnOurServer(t *testing.T) {
	requireJava(t)
	xdsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	ours := startOurServer(t, "eureka", "127.0.0.1", false, "-xds", xdsAddr)
	grpcSpringClient(t, "spring-1", ours.serviceURL())
	conn := xdstest.Conn(t, xdstest.Bootstrap(xdsAddr, `{"type":"insecure"}`, t.Name()), "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "spring-1")
}
