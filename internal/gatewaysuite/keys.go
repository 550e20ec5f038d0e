package gatewaysuite

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
)

// Passive health is an instance's app's, region's and id's: ids repeat
// across apps and regions (StatefulSet pod names, host:port ids), and one
// app's dead instance must not take another's of the same id out.

// EVIL's "shared" on a dead port fails one request (502, its retries on
// the same instance ejecting it); VICTIM's "shared" goes on taking its
// turns with VICTIM's other instance.
func ejectionKeyedByApp(t *testing.T, start Starter) {
	base, store, _ := start(t)
	shared, other := newBackend(t, "victim-shared", nil), newBackend(t, "victim-other", nil)
	register(t, store, instance("victim", "shared", shared.port))
	register(t, store, instance("victim", "other", other.port))
	register(t, store, instance("evil", "shared", testkit.FreePort(t)))

	expect(t, "EVIL's dead instance", get(t, base+"/evil/x").status, 502)
	if got := names(t, base+"/victim/x", 4); !alternates(got, "victim-shared", "victim-other") {
		t.Errorf("VICTIM after EVIL's shared failed: %v, want both in turn", got)
	}
}

// The remote region's ORDERS/o20, on a dead port, fails a request that
// fails over to it; once ORDERS has local instances again, the local o20
// takes its turns.
func ejectionKeyedByRegion(t *testing.T, start Starter) {
	base, store, _ := start(t)
	inRegion(t, store, instance("keyed-orders", "o20", testkit.FreePort(t)))
	expect(t, "the remote region's dead o20", get(t, base+"/keyed-orders/x").status, 502)

	o20, o21 := newBackend(t, "local-o20", nil), newBackend(t, "local-o21", nil)
	register(t, store, instance("keyed-orders", "o20", o20.port))
	register(t, store, instance("keyed-orders", "o21", o21.port))
	if got := names(t, base+"/keyed-orders/x", 4); !alternates(got, "local-o20", "local-o21") {
		t.Errorf("the local instances after the remote o20 failed: %v, want both in turn", got)
	}
}

// Active health is keyed alike (balancer's TestCheckerKeyedByApp shows it
// for apps): the local ORDERS/o20 failing its health check leaves ORDERS
// with no instance that can take a request, and it fails over to the
// remote region, whose own o20 is not taken for the local one.
func healthKeyedByRegion(t *testing.T, start Starter) {
	base, store, _ := start(t)
	remote := newBackend(t, "remote-o20", nil)
	inRegion(t, store, instance("hkeyed-orders", "o20", remote.port))
	register(t, store, sickInstance(t, "hkeyed-orders", "o20"))
	testkit.Eventually(t, 5*time.Second, "the remote o20 taking the requests", func() bool {
		r := get(t, base+"/hkeyed-orders/x")
		return r.status == 200 && decode(t, r).Name == "remote-o20"
	})
}

// sickInstance registers an instance of app whose health URL answers
// 500 (and any other request 200).
func sickInstance(t *testing.T, app, id string) *eureka.InstanceInfo {
	sick := newBackend(t, "sick-"+id, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			http.Error(w, "unwell", 500)
			return
		}
		echoHandler("sick-"+id).ServeHTTP(w, r)
	}))
	i := instance(app, id, sick.port)
	i.HealthCheckURL = fmt.Sprintf("http://127.0.0.1:%d/health", sick.port)
	return i
}

// inRegion makes i the remote region's one instance.
func inRegion(t *testing.T, store *registry.Store, i *eureka.InstanceInfo) {
	t.Helper()
	doc := &eureka.Applications{Applications: []*eureka.Application{{Name: i.App, Instances: []*eureka.InstanceInfo{i}}}}
	if err := regions.MirrorOf(store).Update(Region, doc, time.Now()); err != nil {
		t.Fatal(err)
	}
}
