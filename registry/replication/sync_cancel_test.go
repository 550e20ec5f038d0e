package replication_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// heldRegistry is a peer in front of an origin that reads the origin's
// registry when asked for it, then holds it until released: a copy taken
// before what happens meanwhile on the origin.
func heldRegistry(t *testing.T, to string) (peer string, captured <-chan struct{}, release func()) {
	t.Helper()
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: to})
	got, free := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/apps/") || r.URL.RawQuery != "" {
			proxy.ServeHTTP(w, r)
			return
		}
		req, _ := http.NewRequest(http.MethodGet, "http://"+to+r.URL.Path, nil)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		close(got)
		<-free
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
	}))
	var once sync.Once
	release = func() { once.Do(func() { close(free) }) }
	t.Cleanup(srv.Close)
	t.Cleanup(release) // before Close, which waits for the held answer
	return srv.URL + "/eureka/", got, release
}

// copying is a node copying its peer's registry, held (heldRegistry)
// until released: the origin a, holding n sample instances, and the node
// b, whose API applies nothing replicated until the copy is over.
type copying struct {
	a, b     *registry.Store
	bPeers   *replication.Peers
	bAddr    string
	captured <-chan struct{}
	release  func()
}

func startCopying(t *testing.T, n int) *copying {
	t.Helper()
	c := &copying{a: registry.New(registry.Config{DisableSelfPreservation: true}), b: registry.New(registry.Config{DisableSelfPreservation: true})}
	for k := range n {
		testkit.MustRegister(t, c.a, testkit.SampleInstance(k), false)
	}
	var viaPeer string
	viaPeer, c.captured, c.release = heldRegistry(t, serve(t, c.a, httpapi.APIConfig{}))
	var err error
	if c.bPeers, err = replication.New(c.b, replication.Config{Peers: []string{viaPeer}}); err != nil {
		t.Fatal(err)
	}
	c.bAddr = serve(t, c.b, httpapi.APIConfig{Peers: c.bPeers, Ready: c.bPeers.Synced(), Applying: c.bPeers.Copied()})
	c.bPeers.StartSync()
	t.Cleanup(c.bPeers.Stop)
	<-c.captured // the copy holds every instance
	return c
}

// serve serves s's REST API on loopback until the test ends, and returns
// its address.
func serve(t *testing.T, s *registry.Store, cfg httpapi.APIConfig) string {
	t.Helper()
	srv := httpapi.NewServer(httpapi.NewAPI(s, cfg), httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.StopOnCleanup(t, 5*time.Second, func(ctx context.Context) { srv.Stop(ctx) })
	return srv.Addr().String()
}

// A cancel replicated to a node while it copies its peer's registry is
// applied after the copy, not before it: the copy, taken before the
// cancel, would bring the instance back.
func TestCancelDuringTheSyncStaysCancelled(t *testing.T) {
	c := startCopying(t, 100)
	aPeers, err := replication.New(c.a, replication.Config{Peers: []string{"http://" + c.bAddr + "/eureka/"}, CongestionRetry: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	aPeers.Start()
	defer aPeers.Stop()
	x := testkit.SampleInstance(0)
	if !c.a.Cancel(x.App, x.InstanceID, false) {
		t.Fatal("cancel on the origin")
	}
	testkit.Eventually(t, 5*time.Second, "the replicated cancel to reach the copying node", func() bool {
		return aPeers.Stats()[0].Failures > 0
	})
	c.release()
	<-c.bPeers.Synced()
	testkit.Eventually(t, 5*time.Second, "the cancel applied after the copy", func() bool {
		_, ok := c.b.Get(x.App, x.InstanceID)
		return !ok
	})
	if n := c.b.Len(); n != 99 {
		t.Fatalf("the node holds %d instances, want the origin's 99", n)
	}
}

// A client's cancel that comes while the node copies its peer's registry
// is answered 503 (its client tries another node): applied before the
// copy reached the instance, the copy would bring it back.
func TestClientCancelWaitsForTheCopy(t *testing.T) {
	c := startCopying(t, 1)
	x := testkit.SampleInstance(0)
	cancel := "http://" + c.bAddr + "/eureka/apps/" + x.App + "/" + x.InstanceID
	if status := httpDo(t, http.MethodDelete, cancel, nil); status != http.StatusServiceUnavailable {
		t.Fatalf("a client's cancel during the copy: %d, want 503", status)
	}
	c.release()
	<-c.bPeers.Synced()
	if status := httpDo(t, http.MethodDelete, cancel, nil); status != http.StatusOK {
		t.Fatalf("the cancel after the copy: %d, want 200", status)
	}
	if _, ok := c.b.Get(x.App, x.InstanceID); ok {
		t.Fatal("the cancelled instance is still held")
	}
}
