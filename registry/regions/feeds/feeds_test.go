package feeds_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/registrytest"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/regions"
	"github.com/eurekagate/eurekagate/registry/regions/feeds"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

const region = "eu-west-1"

// remote is a remote region: our registry server on loopback.
type remote = registrytest.Server

func startRemote(t *testing.T, addr string, store *registry.Store) *remote {
	t.Helper()
	return registrytest.Start(t, store, httpapi.ServerConfig{Addr: addr})
}

// localStore is the registry that serves the remote region, on a fake
// clock for its retention.
func localStore(t *testing.T, clock *testkit.FakeClock) *registry.Store {
	t.Helper()
	return registry.New(registry.Config{
		Region:                "us-east-1",
		RemoteRegions:         []registry.RemoteRegion{{Name: region}},
		RemoteRegionRetention: time.Minute,
		Clock:                 clock,
	})
}

func startFeeds(t *testing.T, store *registry.Store, urls ...string) *feeds.Feeds {
	t.Helper()
	f, err := feeds.New(store, feeds.Config{Remotes: []feeds.Remote{{Name: region, URLs: urls}}, FetchInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.Start()
	testkit.StopOnCleanupChecked(t, 5*time.Second, f.Stop)
	return f
}

func state(store *registry.Store) regions.State { return regions.MirrorOf(store).States()[0] }

func ids(is []*eureka.InstanceInfo) string {
	var out []string
	for _, i := range is {
		out = append(out, i.ID())
	}
	return strings.Join(out, ",")
}

func waitInstances(t *testing.T, store *registry.Store, app, want string) {
	t.Helper()
	testkit.Eventually(t, 5*time.Second, app+" in "+region+" to be "+want, func() bool {
		return ids(regions.MirrorOf(store).InstancesIn(app, region)) == want
	})
}

// The region becomes ready with the remote's registry, and the remote's
// changes (a registration, a status, a cancel) reach the local Store
// within seconds, through the watch.
func TestRegionReadyAndChangesArrive(t *testing.T) {
	rs := registry.New(registry.Config{})
	testkit.MustRegister(t, rs, testkit.Inst("ORDERS", "o1"), false)
	r := startRemote(t, "127.0.0.1:0", rs)
	local := localStore(t, testkit.NewFakeClock())
	if _, err := regions.MirrorOf(local).Parse(region); err != regions.ErrRegionNotReady {
		t.Fatalf("before the first read: %v, want ErrRegionNotReady", err)
	}
	startFeeds(t, local, r.URL())

	waitInstances(t, local, "ORDERS", "o1")
	st := state(local)
	if !st.Ready || st.Instances != 1 || st.Syncs == 0 || st.LastError != "" {
		t.Errorf("state %+v, want ready with one instance", st)
	}
	if _, err := regions.MirrorOf(local).Parse(region); err != nil {
		t.Errorf("ready region refused: %v", err)
	}
	if got := local.Instances("ORDERS"); len(got) != 0 {
		t.Errorf("the remote's instances reached the local registry: %v", ids(got))
	}

	testkit.MustRegister(t, rs, testkit.Inst("ORDERS", "o2"), false)
	waitInstances(t, local, "ORDERS", "o1,o2")
	if err := rs.SetStatus("ORDERS", "o1", eureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	waitInstances(t, local, "ORDERS", "o2")
	rs.Cancel("ORDERS", "o2", false)
	waitInstances(t, local, "ORDERS", "")
}

// A remote that stops answering is recorded as failing and its instances
// are kept; past the retention the Store drops them, and the region's next
// answer brings them back.
func TestRemoteStoppedKeepsInstancesThenDrops(t *testing.T) {
	rs := registry.New(registry.Config{})
	testkit.MustRegister(t, rs, testkit.Inst("ORDERS", "o1"), false)
	r := startRemote(t, "127.0.0.1:0", rs)
	clock := testkit.NewFakeClock()
	local := localStore(t, clock)
	startFeeds(t, local, r.URL())
	waitInstances(t, local, "ORDERS", "o1")

	r.Stop()
	testkit.Eventually(t, 10*time.Second, "the failure recorded", func() bool {
		st := state(local)
		return st.Failures > 0 && st.LastError != ""
	})
	st := state(local)
	if !st.Ready || st.Dropped || st.Instances != 1 {
		t.Errorf("state after the remote stopped: %+v, want ready, not dropped, its instance kept", st)
	}
	waitInstances(t, local, "ORDERS", "o1")

	clock.Advance(30 * time.Second)
	regions.MirrorOf(local).DropStale()
	if got := ids(regions.MirrorOf(local).InstancesIn("ORDERS", region)); got != "o1" {
		t.Fatalf("dropped within the retention: %q", got)
	}
	clock.Advance(31 * time.Second)
	regions.MirrorOf(local).DropStale()
	if got := regions.MirrorOf(local).InstancesIn("ORDERS", region); len(got) != 0 {
		t.Fatalf("kept past the retention: %v", ids(got))
	}
	if st := state(local); !st.Dropped || st.Instances != 0 {
		t.Errorf("state past the retention: %+v, want dropped", st)
	}

	// The region answers again, at the same address. The client's watch
	// is answered when the remote's registry changes (or after its
	// WatchWait, 30s, without one).
	startRemote(t, r.Addr, rs)
	testkit.MustRegister(t, rs, testkit.Inst("ORDERS", "o2"), false)
	waitInstances(t, local, "ORDERS", "o1,o2")
	if st := state(local); st.Dropped || st.LastError != "" {
		t.Errorf("state after the region came back: %+v", st)
	}
}

// noWatch hides the watch from the client, as a Java Eureka server has
// none: the client then polls.
func noWatch(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(hideWatch{w}, r)
	})
}

type hideWatch struct{ http.ResponseWriter }

func (w hideWatch) WriteHeader(code int) {
	w.Header().Del(httpapi.HeaderWatch)
	w.ResponseWriter.WriteHeader(code)
}

func (w hideWatch) Write(b []byte) (int, error) {
	w.Header().Del(httpapi.HeaderWatch)
	return w.ResponseWriter.Write(b)
}

// A remote without the watch is polled every FetchInterval, with deltas;
// a poll that changes nothing still counts as a read.
func TestRemoteWithoutWatchIsPolled(t *testing.T) {
	rs := registry.New(registry.Config{})
	testkit.MustRegister(t, rs, testkit.Inst("ORDERS", "o1"), false)
	var regionsAsked, watched bool
	api := httpapi.NewHTTPHandler(httpapi.NewAPI(rs, httpapi.APIConfig{}))
	srv := httptest.NewServer(noWatch(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("regions") {
			regionsAsked = true
		}
		if r.URL.Query().Has("watch") {
			watched = true
		}
		api.ServeHTTP(w, r)
	})))
	defer srv.Close()
	local := localStore(t, testkit.NewFakeClock())
	startFeeds(t, local, srv.URL+"/eureka/")
	waitInstances(t, local, "ORDERS", "o1")
	syncs := state(local).Syncs
	testkit.MustRegister(t, rs, testkit.Inst("ORDERS", "o2"), false)
	waitInstances(t, local, "ORDERS", "o1,o2")
	testkit.Eventually(t, 5*time.Second, "polls that change nothing counted", func() bool {
		return state(local).Syncs >= syncs+3
	})
	if regionsAsked {
		t.Error("a read asked the remote for regions: regions would chain")
	}
	if watched {
		t.Error("the client watched a server that offers no watch")
	}
}

// A remote that never answered leaves the region not ready, its failures
// recorded.
func TestRemoteNeverAnswering(t *testing.T) {
	addr := testkit.FreeAddr(t) // nothing listens there
	local := localStore(t, testkit.NewFakeClock())
	startFeeds(t, local, "http://"+addr+"/eureka/")
	testkit.Eventually(t, 10*time.Second, "the failure recorded", func() bool { return state(local).Failures > 0 })
	if st := state(local); st.Ready || st.LastError == "" {
		t.Errorf("state %+v, want not ready with an error", st)
	}
	if _, err := regions.MirrorOf(local).Parse(region); err != regions.ErrRegionNotReady {
		t.Errorf("ParseRegions: %v, want ErrRegionNotReady", err)
	}
}

func TestNewRefuses(t *testing.T) {
	store := localStore(t, testkit.NewFakeClock())
	u := []string{"http://127.0.0.1:1/eureka/"}
	for _, c := range []struct {
		name    string
		remotes []feeds.Remote
		want    string
	}{
		{"unknown", []feeds.Remote{{Name: "ap-south-1", URLs: u}}, `"ap-south-1" is not one of the registry's remote regions (eu-west-1)`},
		{"own", []feeds.Remote{{Name: "US-East-1", URLs: u}}, "own region"},
		{"twice", []feeds.Remote{{Name: region, URLs: u}, {Name: "EU-West-1", URLs: u}}, "listed twice"},
		{"no URL", []feeds.Remote{{Name: region}}, "no service URL"},
		{"bad URL", []feeds.Remote{{Name: region, URLs: []string{"eureka:8761"}}}, "not an http or https URL"},
		{"no name", []feeds.Remote{{URLs: u}}, "without a name"},
	} {
		if _, err := feeds.New(store, feeds.Config{Remotes: c.remotes}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	if _, err := feeds.New(nil, feeds.Config{}); err == nil {
		t.Error("New(nil) accepted")
	}
	// A name in another case is the configured region.
	f, err := feeds.New(store, feeds.Config{Remotes: []feeds.Remote{{Name: "EU-WEST-1", URLs: u}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Regions(); len(got) != 1 || got[0] != region {
		t.Errorf("Regions() = %v", got)
	}
	// Stopped without being started.
	if err := f.Stop(t.Context()); err != nil {
		t.Error(err)
	}
	f.Start() // after Stop: nothing
}

// Start and Stop twice, and Stop without a region, are harmless.
func TestStartStopTwice(t *testing.T) {
	store := localStore(t, testkit.NewFakeClock())
	f, err := feeds.New(store, feeds.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f.Start()
	f.Start()
	if err := f.Stop(t.Context()); err != nil {
		t.Error(err)
	}
	if err := f.Stop(t.Context()); err != nil {
		t.Error(err)
	}
}

// A quiet region that is up is never taken for gone, however short the
// retention: the feed's watch is held at most a quarter of it, and each
// empty answer counts as the region answering.
func TestQuietRegionOutlivesAShortRetention(t *testing.T) {
	rs := registry.New(registry.Config{})
	testkit.MustRegister(t, rs, testkit.Inst("ORDERS", "o1"), false)
	r := startRemote(t, "127.0.0.1:0", rs)
	local := registry.New(registry.Config{
		RemoteRegions: []registry.RemoteRegion{{Name: region}}, RemoteRegionRetention: time.Second,
	})
	local.Start() // its own loop drops stale regions, on the system clock
	t.Cleanup(local.Stop)
	startFeeds(t, local, r.URL())
	waitInstances(t, local, "ORDERS", "o1")
	deadline := time.Now().Add(3 * time.Second) // three retentions without a change
	for time.Now().Before(deadline) {
		if st := state(local); st.Dropped || ids(regions.MirrorOf(local).InstancesIn("ORDERS", region)) != "o1" {
			t.Fatalf("a quiet region that is up was dropped: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// And once it stops, it is dropped within the retention and its tenth.
	r.Stop()
	testkit.Eventually(t, 5*time.Second, "the stopped region to be dropped", func() bool { return state(local).Dropped })
}
