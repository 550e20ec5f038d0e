package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/fxmodules"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

const interval = 100 * time.Millisecond

func start(t *testing.T, opts fx.Option) *fx.App {
	t.Helper()
	app := fx.New(opts, fx.NopLogger)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return app
}

func stop(t *testing.T, app *fx.App) {
	t.Helper()
	if err := stopErr(app); err != nil {
		t.Error(err)
	}
}

func stopErr(app *fx.App) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return app.Stop(ctx)
}

func service(t *testing.T, name, eurekaURL, calls string) (*fx.App, string) {
	t.Helper()
	addr := testkit.FreeAddr(t)
	opts, err := options(Config{Name: name, Addr: addr, EurekaURL: eurekaURL, Calls: calls, FetchInterval: interval}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return start(t, opts), addr
}

// The registry, two instances of inventory and an orders service that
// calls inventory by name: calls spread round-robin, a stopped instance is
// cancelled and no longer called, and orders keeps calling from its cache
// while the registry is down.
func TestEndToEnd(t *testing.T) {
	defer http.DefaultClient.CloseIdleConnections()
	var srv *httpapi.Server
	var store *registry.Store
	regApp := start(t, fx.Options(fxmodules.Registry, fxmodules.Server,
		fx.Supply(httpapi.ServerConfig{Addr: "127.0.0.1:0"}), fx.Populate(&srv, &store)))
	eurekaURL := "http://" + srv.Addr().String() + "/eureka/"

	inv1, addr1 := service(t, "inventory", eurekaURL, "")
	// These two stop after the registry is gone: their cancel fails, and
	// says so.
	inv2, addr2 := service(t, "inventory", eurekaURL, "")
	defer stopErr(inv2)
	orders, ordersAddr := service(t, "orders", eurekaURL, "inventory")
	defer stopErr(orders)

	// tryCalls calls inventory through orders n times and counts who
	// answered; ok is false if a call failed.
	tryCalls := func(n int) (map[string]int, bool) {
		seen := map[string]int{}
		for range n {
			status, body := testkit.HTTPGet(t, "http://"+ordersAddr+"/call")
			if status != 200 {
				return seen, false
			}
			seen[strings.TrimPrefix(body, "inventory ")]++
		}
		return seen, true
	}
	calls := func(n int) map[string]int {
		seen, ok := tryCalls(n)
		if !ok {
			t.Fatalf("a call through orders failed (answers so far: %v)", seen)
		}
		return seen
	}
	id1, id2 := "127.0.0.1:inventory:"+port(addr1), "127.0.0.1:inventory:"+port(addr2)
	testkit.Eventually(t, 10*time.Second, "both inventories UP in the orders cache", func() bool {
		seen, ok := tryCalls(2)
		return ok && seen[id1] == 1 && seen[id2] == 1
	})
	if seen := calls(10); seen[id1] != 5 || seen[id2] != 5 {
		t.Fatalf("calls not round-robin: %v", seen)
	}

	// Stopping an instance cancels it, and orders stops calling it.
	stop(t, inv1)
	if _, ok := store.Get("INVENTORY", id1); ok {
		t.Fatal("stopped instance still registered")
	}
	testkit.Eventually(t, 10*time.Second, "orders to drop the stopped instance", func() bool {
		seen, ok := tryCalls(2)
		return ok && seen[id2] == 2
	})
	if seen := calls(6); seen[id2] != 6 {
		t.Fatalf("after the stop: %v", seen)
	}

	// The registry goes down: orders keeps calling from its cache.
	stop(t, regApp)
	time.Sleep(3 * interval) // let a few fetches fail
	if seen := calls(4); seen[id2] != 4 {
		t.Fatalf("with the registry down: %v", seen)
	}
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
