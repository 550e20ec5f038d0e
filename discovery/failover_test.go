package discovery

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// A server that answers 307 (a Java server starting) or 401 (credentials
// it does not take) is failed over, for the registration, the heartbeats
// and the fetches alike.
func TestFailsOverOnRedirectAndUnauthorized(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusUnauthorized} {
		bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "http://127.0.0.1:1/eureka/")
			w.WriteHeader(status)
		}))
		good := startOurServer(t, "127.0.0.1:0")
		c, err := New(Config{Zone: "a", ZoneServiceURLs: map[string][]string{"a": {bad.URL + "/eureka/"}, "b": {good.URL()}},
			RegistryFetchInterval: 20 * time.Millisecond, DisableWatch: true,
			Instance: &InstanceConfig{AppName: "orders", HostName: "127.0.0.1", IPAddr: "127.0.0.1", LeaseRenewalInterval: 20 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		c.Start()
		testkit.Eventually(t, 5*time.Second, "registered on the other server", func() bool {
			_, ok := good.Store.Get("ORDERS", "127.0.0.1:orders:8080")
			return ok
		})
		testkit.Eventually(t, 5*time.Second, "own instance fetched", func() bool { return len(c.Instances("ORDERS")) == 1 })
		stopClient(t, c)
		if _, ok := good.Store.Get("ORDERS", "127.0.0.1:orders:8080"); ok {
			t.Errorf("status %d: not cancelled on the server that took it", status)
		}
		bad.Close()
	}
}

// The client shuffles its zone's servers again now and then; the other
// zones' stay behind them.
func TestServersReshuffled(t *testing.T) {
	var mine []string
	for range 4 {
		f := newFakeEureka(t)
		f.full = netflixApps("1", "", nil...)
		mine = append(mine, f.url())
	}
	other := newFakeEureka(t)
	c, err := New(Config{Zone: "a", ZoneServiceURLs: map[string][]string{"a": mine, "b": {other.url()}},
		ServerReshuffleInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[string]bool{}
	for range 40 {
		if err := c.Refresh(); err != nil {
			t.Fatal(err)
		}
		servers := c.servers.Servers()
		leaders[servers[0].Base] = true
		if servers[len(servers)-1].Base != other.url() {
			t.Fatalf("another zone's server moved ahead: %v", servers)
		}
	}
	if len(leaders) < 2 {
		t.Errorf("the zone's servers were never reshuffled: leaders %v", leaders)
	}
	if full, _ := other.calls(); full != 0 {
		t.Errorf("the other zone's server was asked %d times", full)
	}
}
