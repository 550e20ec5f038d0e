package interop

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// This file runs Spring Cloud Gateway (java/gateway, WebFlux, with the
// Eureka client and the discovery locator) against our standalone server.
// The helpers are prefixed sgw.

// sgwBackend is an instance served by Go: /hello answers its id.
type sgwBackend struct {
	id   string
	port int
	hits atomic.Int64
}

func sgwNewBackend(t *testing.T, id string) *sgwBackend {
	t.Helper()
	b := &sgwBackend{id: id}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		io.WriteString(w, id)
	}))
	t.Cleanup(srv.Close)
	b.port = srv.Listener.Addr().(*net.TCPAddr).Port
	return b
}

// instance is the backend as registered: app ORDERS, VIP orders (Spring
// looks instances up by VIP), a lease long enough for the test without
// heartbeats.
func (b *sgwBackend) instance() *eureka.InstanceInfo {
	return &eureka.InstanceInfo{
		InstanceID: b.id, HasInstanceID: true, HostName: "127.0.0.1", App: "ORDERS", IPAddr: "127.0.0.1",
		VIPAddress: "orders", SecureVIPAddress: "orders", Status: eureka.StatusUp, CountryID: 1,
		Port: eureka.Port{Number: b.port, Enabled: true}, SecurePort: eureka.Port{Number: 443},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
		LeaseInfo:      eureka.LeaseInfo{RenewalIntervalInSecs: 30, DurationInSecs: 300},
	}
}

// sgwStartGateway starts Spring Cloud Gateway against serviceURL and
// returns at once (the caller awaits its start, so that other JVMs boot
// meanwhile). The properties, and why:
//
//   - spring.cloud.gateway.server.webflux.discovery.locator.enabled and
//     lower-case-service-id (the 4.3 names): a route /orders/** to
//     lb://ORDERS for each application in the registry;
//   - eureka.client.registry-fetch-interval-seconds=1 (default 30) and
//     spring.cloud.loadbalancer.cache.ttl=1s (default 35s): the two caches
//     between a change in our registry and the gateway's choice, so that
//     a cancel or OUT_OF_SERVICE shows within about two seconds;
//   - eureka.client.register-with-eureka=false: the gateway only reads
//     the registry;
//   - the gateway actuator endpoint, read-only, to see the routes;
//   - DEBUG for com.netflix.discovery.DiscoveryClient: its fetches, deltas
//     and any reconcile hash mismatch are logged at DEBUG only.
func sgwStartGateway(t *testing.T, serviceURL string) (*proc, int) {
	t.Helper()
	port := freePort(t, "127.0.0.1")
	args := append(append(append([]string(nil), javaArgs...), "-jar", jar(t, "gateway")), quiet...)
	args = append(args,
		fmt.Sprintf("--server.port=%d", port),
		"--server.address=127.0.0.1",
		"--spring.application.name=gateway",
		"--eureka.instance.hostname=127.0.0.1",
		"--eureka.instance.ip-address=127.0.0.1",
		"--eureka.client.service-url.defaultZone="+serviceURL,
		"--eureka.client.register-with-eureka=false",
		"--eureka.client.registry-fetch-interval-seconds=1",
		"--spring.cloud.loadbalancer.cache.ttl=1s",
		"--spring.cloud.gateway.server.webflux.discovery.locator.enabled=true",
		"--spring.cloud.gateway.server.webflux.discovery.locator.lower-case-service-id=true",
		"--management.endpoints.web.exposure.include=health,gateway",
		"--management.endpoint.gateway.access=read-only",
		"--logging.level.com.netflix.discovery.DiscoveryClient=DEBUG",
	)
	return start(t, "spring gateway", "java", args...), port
}

// Spring Cloud Gateway, its discovery locator reading our registry,
// routes /orders/hello by lb://ORDERS to both instances registered with
// us (a Spring client and a Go backend registered through the REST API);
// an OUT_OF_SERVICE override and a cancel take the Go backend out of its
// rotation within about its two refresh intervals (fetch and LoadBalancer
// cache, a second each here), and removing the override brings it back.
// Its Eureka client applies every delta from our server: one full fetch,
// no hash mismatch.
func TestSpringGatewayRoutesByOurRegistry(t *testing.T) {
	requireJava(t)
	t.Parallel()
	srv := startOurServer(t, "our server", "127.0.0.1", false)
	base := srv.serviceURL()

	// The Go backend first, so that the gateway's first fetch finds a
	// registry that is not empty and goes on by deltas.
	goB := sgwNewBackend(t, "orders-go-1")
	jsrvRegisterRaw(t, base, goB.instance())

	gw, gwPort := sgwStartGateway(t, base)
	startSpringClient(t, "orders", "orders-1", base)
	gw.await(`Started \w+ in [0-9.]+ seconds`, 90*time.Second)
	gwURL := fmt.Sprintf("http://127.0.0.1:%d", gwPort)

	// The discovery locator's route.
	var routes string
	eventually(t, 20*time.Second, "a discovery route to lb://ORDERS", func() (bool, string) {
		status, body, err := tryCall("GET", gwURL+"/actuator/gateway/routes", nil)
		routes = body
		return err == nil && status == 200 && strings.Contains(body, `"uri":"lb://ORDERS"`) && strings.Contains(body, "/orders/**"),
			fmt.Sprint(status, " ", body, " ", err)
	})
	t.Logf("the gateway's routes: %s", routes)

	hello := func() string {
		status, body, err := tryCall("GET", gwURL+"/orders/hello", nil)
		if err != nil || status != 200 {
			return fmt.Sprint(status, " ", body, " ", err)
		}
		return body
	}
	// Both instances in rotation.
	eventually(t, 20*time.Second, "both instances answer through the gateway", func() (bool, string) {
		seen := map[string]bool{}
		for range 4 {
			seen[hello()] = true
		}
		return len(seen) == 2 && seen["orders-1"] && seen["orders-go-1"], fmt.Sprint(seen)
	})

	// out waits until the gateway sends nothing more to the Go backend:
	// six answers in a row from orders-1 (the round robin alternates
	// between two instances), and none reaches the backend after them.
	out := func(what string) time.Duration {
		t.Helper()
		since := time.Now()
		var took time.Duration
		eventually(t, 15*time.Second, what+": orders-go-1 out of the gateway's rotation", func() (bool, string) {
			first := time.Now()
			for i := range 6 {
				if got := hello(); got != "orders-1" {
					return false, fmt.Sprintf("answer %d: %s", i, got)
				}
			}
			took = first.Sub(since)
			return true, ""
		})
		hits := goB.hits.Load()
		for range 6 {
			if got := hello(); got != "orders-1" {
				t.Errorf("%s: the gateway answered %q after taking orders-go-1 out", what, got)
			}
		}
		if n := goB.hits.Load() - hits; n != 0 {
			t.Errorf("%s: orders-go-1 got %d requests after it left the rotation", what, n)
		}
		t.Logf("%s: out of the gateway's rotation after %v", what, took.Round(10*time.Millisecond))
		// Nominally at most a fetch interval plus the LoadBalancer's
		// cache ttl (2 s); the rest is slack for a loaded machine.
		if took > 8*time.Second {
			t.Errorf("%s: the gateway took %v to stop routing to orders-go-1, beyond its refresh intervals", what, took)
		}
		return took
	}

	// An OUT_OF_SERVICE override.
	if code, body := call(t, "PUT", base+"apps/ORDERS/orders-go-1/status?value=OUT_OF_SERVICE", nil); code != 200 {
		t.Fatalf("PUT status OUT_OF_SERVICE: %d %s", code, body)
	}
	out("OUT_OF_SERVICE")

	// The override removed, with value=UP: without it the status
	// becomes UNKNOWN (on Java's server as on ours) until the instance's
	// next registration, which this one, without heartbeats, never sends.
	if code, body := call(t, "DELETE", base+"apps/ORDERS/orders-go-1/status?value=UP", nil); code != 200 {
		t.Fatalf("DELETE the status override: %d %s", code, body)
	}
	eventually(t, 15*time.Second, "orders-go-1 back in the gateway's rotation", func() (bool, string) {
		got := []string{hello(), hello()}
		return got[0] == "orders-go-1" || got[1] == "orders-go-1", fmt.Sprint(got)
	})

	// A cancel.
	if code, body := call(t, "DELETE", base+"apps/ORDERS/orders-go-1", nil); code != 200 {
		t.Fatalf("cancelling orders-go-1: %d %s", code, body)
	}
	out("cancel")

	// The gateway's Eureka client took every delta from us.
	if n := gw.count(`Got delta update with apps hashcode`); n < 3 {
		t.Errorf("the gateway applied %d deltas", n)
	}
	if n := gw.count(`Reconcile hashcodes do not match`); n != 0 {
		t.Errorf("the gateway's Eureka client logged %d reconcile hash mismatches", n)
	}
	if n := gw.count(`Getting all instance registry info from the eureka server`); n != 1 {
		t.Errorf("the gateway's Eureka client made %d full fetches, want only its first", n)
	}
	if n := gw.count(`does not allow the delta revision`); n != 0 {
		t.Errorf("the gateway's Eureka client was refused %d deltas", n)
	}
}
