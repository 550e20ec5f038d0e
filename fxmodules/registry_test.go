package fxmodules

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/replication"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

func TestRegistryDefaults(t *testing.T) {
	var store *registry.Store
	var api *httpapi.API
	app := fxtest.New(t, Registry, fx.Populate(&store, &api))
	app.RequireStart()
	cfg := store.Config()
	if cfg.EvictionInterval != 60*time.Second || cfg.RenewalPercentThreshold != 0.85 || cfg.DisableSelfPreservation {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	if api.MaxBodyBytes() != httpapi.DefaultMaxBodyBytes {
		t.Errorf("max body = %d", api.MaxBodyBytes())
	}
	app.RequireStop()
}

func TestRegistryWithSuppliedConfig(t *testing.T) {
	var store *registry.Store
	app := fxtest.New(t, Registry,
		fx.Supply(RegistryConfig{Store: registry.Config{DisableSelfPreservation: true, EvictionInterval: time.Second}}),
		fx.Populate(&store))
	app.RequireStart()
	if cfg := store.Config(); !cfg.DisableSelfPreservation || cfg.EvictionInterval != time.Second {
		t.Errorf("supplied config ignored: %+v", cfg)
	}
	app.RequireStop()
}

func TestServerServesAndStops(t *testing.T) {
	var srv *httpapi.Server
	app := fxtest.New(t, Registry, Server,
		fx.Supply(httpapi.ServerConfig{Addr: "127.0.0.1:0"}),
		fx.Populate(&srv))
	app.RequireStart()
	base := "http://" + srv.Addr().String()
	body := `{"instance":{"hostName":"h","app":"A","ipAddr":"127.0.0.1","dataCenterInfo":{"name":"MyOwn"}}}`
	if status, _ := testkit.HTTPPost(t, base+"/eureka/apps/A", "application/json", body); status != 204 {
		t.Fatalf("register: %d", status)
	}
	if _, b := testkit.HTTPGet(t, base+"/eureka/apps/A"); !strings.Contains(b, "<hostName>h</hostName>") {
		t.Fatalf("read back: %s", b)
	}
	http.DefaultClient.CloseIdleConnections()
	app.RequireStop()
}

func TestServerBindErrorFailsStart(t *testing.T) {
	var first *httpapi.Server
	a := fxtest.New(t, Registry, Server, fx.Supply(httpapi.ServerConfig{Addr: "127.0.0.1:0"}), fx.Populate(&first))
	a.RequireStart()
	defer a.RequireStop()
	b := fx.New(Registry, Server, fx.Supply(httpapi.ServerConfig{Addr: first.Addr().String()}), fx.NopLogger)
	if err := b.Start(t.Context()); err == nil {
		b.Stop(t.Context())
		t.Fatal("a second server on the same address started")
	}
}

// An authentication setting that would not work fails the application
// before anything listens.
func TestRegistryRefusesBrokenAuth(t *testing.T) {
	var api *httpapi.API
	app := fx.New(Registry, fx.NopLogger,
		fx.Supply(RegistryConfig{API: httpapi.APIConfig{Auth: httpapi.AuthConfig{RequireForReads: true}}}),
		fx.Populate(&api))
	if err := app.Err(); err == nil || !strings.Contains(err.Error(), "RequireForReads") {
		t.Fatalf("app error %v, want the RequireForReads refusal", err)
	}
}

// The Peers send batches no larger than the API takes (RegistryConfig's
// API.MaxBatchBytes, with Peers.MaxBatchBytes unset): 250 registrations
// of 60 KB reach a peer that takes 256 KiB, split before they are sent.
// A batch of 15 MB, larger than the connection's buffers, would get the
// peer's reset rather than its 413, and never arrive.
func TestPeersTakeTheAPIsBatchLimit(t *testing.T) {
	const limit = 256 << 10
	peerStore := registry.New(registry.Config{})
	addr := testkit.FreeAddr(t)
	peerSrv := httpapi.NewServer(httpapi.NewAPI(peerStore, httpapi.APIConfig{MaxBatchBytes: limit}), httpapi.ServerConfig{Addr: addr})
	if err := peerSrv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peerSrv.Stop(context.Background()) })

	var store *registry.Store
	var peers *replication.Peers
	app := fxtest.New(t, Registry,
		fx.Supply(RegistryConfig{API: httpapi.APIConfig{MaxBatchBytes: limit}, Peers: replication.Config{Peers: []string{"http://" + addr + "/eureka/"}}}),
		fx.Populate(&store, &peers))
	app.RequireStart()
	defer app.RequireStop()
	for k := range 250 {
		i := testkit.Inst("HEAVY", "h"+strconv.Itoa(k))
		i.Metadata = map[string]string{}
		for m := range 60 {
			i.Metadata["key-"+strconv.Itoa(m)] = strings.Repeat("v", 1000)
		}
		testkit.MustRegister(t, store, i, false)
	}
	testkit.Eventually(t, 20*time.Second, "250 heavy registrations on the peer", func() bool { return peerStore.Len() == 250 })
	if ps := peers.Stats()[0]; ps.Dropped != 0 || ps.Failures != 0 {
		t.Errorf("%d tasks dropped, %d batches failed", ps.Dropped, ps.Failures)
	}
}
