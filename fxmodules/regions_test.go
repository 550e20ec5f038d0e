package fxmodules

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/eurekagate/eurekagate/internal/registrytest"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/regions"
	"github.com/eurekagate/eurekagate/registry/regions/feeds"
)

// With RemoteRegions, the Registry module reads each remote region into
// the Store from the application's start to its stop; the region is a
// remote region of the Store without being listed in Store.RemoteRegions.
func TestRegistryReadsRemoteRegions(t *testing.T) {
	remote := registry.New(registry.Config{})
	testkit.MustRegister(t, remote, testkit.Inst("ORDERS", "o1"), false)
	srv := registrytest.Start(t, remote, httpapi.ServerConfig{Addr: "127.0.0.1:0"})

	var store *registry.Store
	var fd *feeds.Feeds
	app := fxtest.New(t, Registry,
		fx.Supply(RegistryConfig{
			Store: registry.Config{RemoteRegionAppWhitelist: []string{"ORDERS"}},
			RemoteRegions: feeds.Config{Remotes: []feeds.Remote{
				{Name: "EU-West-1", URLs: []string{srv.URL()}},
			}},
		}),
		fx.Populate(&store, &fd))
	app.RequireStart()
	if fd == nil {
		t.Fatal("no Feeds with remote regions")
	}
	if got := regions.MirrorOf(store).Names(); len(got) != 1 || got[0] != "eu-west-1" {
		t.Errorf("the Store's remote regions: %v", got)
	}
	testkit.Eventually(t, 5*time.Second, "the remote region's instance", func() bool {
		return len(regions.MirrorOf(store).InstancesIn("ORDERS", "eu-west-1")) == 1
	})
	testkit.MustRegister(t, remote, testkit.Inst("ORDERS", "o2"), false)
	testkit.Eventually(t, 5*time.Second, "the remote region's change", func() bool {
		return len(regions.MirrorOf(store).InstancesIn("ORDERS", "eu-west-1")) == 2
	})
	app.RequireStop()
}

func TestRegistryWithoutRemoteRegionsHasNoFeeds(t *testing.T) {
	var fd *feeds.Feeds
	app := fxtest.New(t, Registry, fx.Populate(&fd))
	app.RequireStart()
	if fd != nil {
		t.Error("Feeds without remote regions")
	}
	app.RequireStop()
}

// A remote region that cannot be read fails the application before it
// starts.
func TestRegistryRefusesBadRemoteRegion(t *testing.T) {
	app := fx.New(Registry, fx.NopLogger,
		fx.Supply(RegistryConfig{
			Store:         registry.Config{Region: "eu-west-1"},
			RemoteRegions: feeds.Config{Remotes: []feeds.Remote{{Name: "eu-west-1", URLs: []string{"http://eu:8761/eureka/"}}}},
		}))
	if err := app.Err(); err == nil || !strings.Contains(err.Error(), "own region") {
		t.Fatalf("app error %v, want the own-region refusal", err)
	}
}

// The supplied Store config is not modified when remote regions are added
// to it.
func TestWithRemotesKeepsConfigured(t *testing.T) {
	configured := make([]registry.RemoteRegion, 1, 4)
	configured[0] = registry.RemoteRegion{Name: "eu-west-1", AppWhitelist: []string{"A"}}
	got := withRemotes(configured, []feeds.Remote{{Name: "EU-WEST-1"}, {Name: "ap-south-1"}})
	if len(got) != 2 || got[0].AppWhitelist == nil || got[1].Name != "ap-south-1" {
		t.Errorf("withRemotes = %+v", got)
	}
	if full := configured[:2]; full[1].Name != "" {
		t.Errorf("the configured slice's array was written: %+v", full)
	}
}
