package discovery

import (
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

func TestRegistrationLifecycleAgainstOurServer(t *testing.T) {
	srv := startOurServer(t, "127.0.0.1:0")
	c, err := New(Config{
		ServiceURLs:           []string{srv.URL()},
		RegistryFetchInterval: 50 * time.Millisecond,
		Instance: &InstanceConfig{AppName: "orders", HostName: "127.0.0.1", Port: 7070,
			LeaseRenewalInterval: 50 * time.Millisecond, Metadata: map[string]string{"zone": "z1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	const id = "127.0.0.1:orders:7070"

	// Registered at once, with Spring's id and defaults.
	testkit.Eventually(t, 5*time.Second, "registration", func() bool { _, ok := srv.Store.Get("ORDERS", id); return ok })
	got, _ := srv.Store.Get("ORDERS", id)
	if got.Port.Number != 7070 || got.VIPAddress != "orders" || got.Metadata["zone"] != "z1" || got.Status != eureka.StatusUp {
		t.Fatalf("registered %+v", got)
	}
	// Heartbeats arrive.
	testkit.Eventually(t, 5*time.Second, "heartbeats", func() bool {
		i, _ := srv.Store.Get("ORDERS", id)
		return i != nil && i.LeaseInfo.LastRenewalTimestamp > i.LeaseInfo.RegistrationTimestamp
	})
	// The client sees itself in its local registry.
	<-c.Ready()
	testkit.Eventually(t, 5*time.Second, "own instance in the cache", func() bool { return len(c.Instances("ORDERS")) == 1 })

	// A server restart loses the registration: the next heartbeat gets 404
	// and the client registers again.
	srv.Stop()
	restarted := startOurServer(t, srv.Addr)
	testkit.Eventually(t, 5*time.Second, "re-registration after restart", func() bool { _, ok := restarted.Store.Get("ORDERS", id); return ok })

	// A status change is registered at once, and so is the way back.
	for _, st := range []eureka.Status{eureka.StatusDown, eureka.StatusUp} {
		if err := c.SetStatus(st); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 5*time.Second, "status "+st.String(), func() bool {
			i, _ := restarted.Store.Get("ORDERS", id)
			return i != nil && i.Status == st
		})
	}
	if err := c.SetMetadata(map[string]string{"weight": "5"}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 5*time.Second, "metadata change", func() bool {
		i, _ := restarted.Store.Get("ORDERS", id)
		return i != nil && i.Metadata["weight"] == "5" && i.Metadata["zone"] == "z1"
	})

	// Stop cancels the registration.
	stopClient(t, c)
	if _, ok := restarted.Store.Get("ORDERS", id); ok {
		t.Fatal("instance still registered after Stop")
	}
}

// A change made on the server is in the client's view after one fetch
// cycle: the next refresh (a delta) brings it, whenever it runs.
func TestRemoteChangeVisibleAfterOneFetch(t *testing.T) {
	srv := startOurServer(t, "127.0.0.1:0")
	c, err := New(Config{ServiceURLs: []string{srv.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(); err != nil { // the initial full fetch
		t.Fatal(err)
	}
	if err := srv.Store.Register(testkit.SampleInstance(1), false); err != nil {
		t.Fatal(err)
	}
	app := testkit.SampleInstance(1).App
	if len(c.Instances(app)) != 0 {
		t.Fatal("visible before any fetch")
	}
	if err := c.Refresh(); err != nil {
		t.Fatal(err)
	}
	if len(c.Instances(app)) != 1 {
		t.Fatalf("not visible after one fetch: %v", c.Instances(app))
	}
}

// The running client's fetch loop picks the change up on its own and
// announces it through Subscribe.
func TestFetchLoopAnnouncesChanges(t *testing.T) {
	srv := startOurServer(t, "127.0.0.1:0")
	const interval = 100 * time.Millisecond
	c, err := New(Config{ServiceURLs: []string{srv.URL()}, RegistryFetchInterval: interval})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	defer stopClient(t, c)
	<-c.Ready()
	changes := c.Changed()

	registered := time.Now()
	if err := srv.Store.Register(testkit.SampleInstance(1), false); err != nil {
		t.Fatal(err)
	}
	app := testkit.SampleInstance(1).App
	select {
	case <-changes:
	case <-time.After(5 * time.Second):
		t.Fatal("no change announced")
	}
	if len(c.Instances(app)) != 1 {
		t.Fatalf("view after the change: %v", c.Instances(app))
	}
	t.Logf("change visible after %v (fetch interval %v)", time.Since(registered), interval)
}

func TestConfigDefaults(t *testing.T) {
	cfg := Config{Instance: &InstanceConfig{AppName: "Orders", IPAddr: "10.0.0.1"}}.withDefaults()
	if cfg.ServiceURLs[0] != "http://localhost:8761/eureka/" || cfg.RegistryFetchInterval != 30*time.Second || cfg.ExpBackOffBound != 10 {
		t.Errorf("client defaults: %+v", cfg)
	}
	ic := cfg.Instance
	if ic.InstanceID != "10.0.0.1:orders:8080" || ic.HostName != "10.0.0.1" || ic.LeaseRenewalInterval != 30*time.Second ||
		ic.LeaseDuration != 90*time.Second || ic.Status != eureka.StatusUp {
		t.Errorf("instance defaults: %+v", ic)
	}
	inst := ic.instance(5)
	if inst.App != "ORDERS" || inst.LeaseInfo.DurationInSecs != 90 || inst.DataCenterInfo.Name != "MyOwn" || inst.LastDirtyTimestamp != 5 {
		t.Errorf("registration: %+v", inst)
	}
	if _, err := New(Config{Instance: &InstanceConfig{}}); err == nil {
		t.Error("an instance without an app name was accepted")
	}
	if _, err := New(Config{ServiceURLs: []string{"ftp://x"}}); err == nil {
		t.Error("a bad service URL was accepted")
	}
}
