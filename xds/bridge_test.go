package xds_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/internal/xdstest"
	"github.com/eurekagate/eurekagate/xds"
)

// The bridge: an xDS server whose source is a discovery client reading a
// Eureka server over its REST API (here ours, on loopback) serves what
// that server holds, and follows its changes.
func TestBridgeServesAnotherEurekaServer(t *testing.T) {
	e := newEnv(t, xds.Config{})
	a, b := xdstest.Backend(t, "a"), xdstest.Backend(t, "b")
	e.register(t, "ORDERS", "a", a, nil)
	e.register(t, "ORDERS", "b", b, nil)

	client, err := discovery.New(discovery.Config{ServiceURLs: []string{e.api + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	client.Start()
	testkit.StopOnCleanupChecked(t, 5*time.Second, client.Stop)
	select {
	case <-client.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("the client read no registry within 10s")
	}
	bridge := xdstest.Serve(t, client, xds.Config{Region: "eu-west-1"})

	conn := xdstest.Conn(t, xdstest.Bootstrap(bridge.Addr().String(), `{"type":"insecure"}`, t.Name()), "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "a", "b")
	e.send(t, http.MethodPut, "/apps/ORDERS/b/status?value=OUT_OF_SERVICE", http.StatusOK)
	xdstest.EventuallyReaches(t, conn, "a")
	e.send(t, http.MethodDelete, "/apps/ORDERS/a", http.StatusOK)
	e.register(t, "ORDERS", "c", xdstest.Backend(t, "c"), nil)
	xdstest.EventuallyReaches(t, conn, "c")
}
