package discovery

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

const ordersID = "127.0.0.1:orders:8080"

// faultProxy stands in front of a server and fails the heartbeats it is
// told to: answered 503, or held until the client gives up. It logs each
// request as "METHOD <fake time since start> STATUS".
type faultProxy struct {
	clk   *fakeClock
	start time.Time
	next  http.Handler
	srv   *httptest.Server

	mu    sync.Mutex
	fail  int // the next heartbeats answered 503
	hang  int // the next heartbeats never answered
	log   []string
	beats chan struct{} // a heartbeat arrived
}

func newFaultProxy(t *testing.T, clk *fakeClock, next http.Handler) *faultProxy {
	t.Helper()
	p := &faultProxy{clk: clk, start: clk.Now(), next: next, beats: make(chan struct{}, 100)}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

// proxyTo forwards to the server s.
func proxyTo(t *testing.T, s *ourServer) http.Handler {
	t.Helper()
	u, err := url.Parse("http://" + s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	return httputil.NewSingleHostReverseProxy(u)
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	at := p.clk.Now().Sub(p.start)
	status := 0
	if r.Method == http.MethodPut {
		switch {
		case p.hang > 0:
			p.hang--
			status = -1
		case p.fail > 0:
			p.fail--
			status = http.StatusServiceUnavailable
		}
		select {
		case p.beats <- struct{}{}:
		default:
		}
	}
	p.mu.Unlock()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	switch {
	case status == -1:
		<-r.Context().Done() // the client times out and closes
		rec.status = -1
	case status != 0:
		rec.WriteHeader(status)
	default:
		p.next.ServeHTTP(rec, r)
	}
	p.mu.Lock()
	p.log = append(p.log, r.Method+" "+at.String()+" "+strconv.Itoa(rec.status))
	p.mu.Unlock()
}

func (p *faultProxy) set(edit func(p *faultProxy)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	edit(p)
}

func (p *faultProxy) requests() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.log, ", ")
}

func (p *faultProxy) url() string { return p.srv.URL + "/eureka/" }

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// newClockedClient registers ORDERS (30 s heartbeats, a 90 s lease) at
// url, with the loops on clk and no fetching.
func newClockedClient(t *testing.T, clk *fakeClock, url string, edit func(*Config)) *Client {
	t.Helper()
	cfg := Config{ServiceURLs: []string{url}, DisableFetch: true, clock: clk,
		Instance: &InstanceConfig{AppName: "orders", HostName: "127.0.0.1", IPAddr: "127.0.0.1"}}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newLeaseServer is our registry on clk, evicting whatever expires.
func newLeaseServer(t *testing.T, clk *fakeClock) (*registry.Store, *ourServer) {
	t.Helper()
	store := registry.New(registry.Config{Clock: clk, DisableSelfPreservation: true})
	return store, startOurServerWith(t, "127.0.0.1:0", store)
}

// newProxiedClient is the setup of the heartbeat tests: our registry on
// clk, a faultProxy in front of it, and a client (not started yet, its
// Config edited by edit if not nil) that registers ORDERS through the proxy.
func newProxiedClient(t *testing.T, clk *fakeClock, edit func(*Config)) (*registry.Store, *faultProxy, *Client) {
	t.Helper()
	store, srv := newLeaseServer(t, clk)
	p := newFaultProxy(t, clk, proxyTo(t, srv))
	return store, p, newClockedClient(t, clk, p.url(), edit)
}

// wantRequests checks that the requests the proxy has seen, as requests
// lists them, are want.
func (p *faultProxy) wantRequests(t *testing.T, want string) {
	t.Helper()
	if got := p.requests(); got != want {
		t.Errorf("requests:\n got %s\nwant %s", got, want)
	}
}

// runFor advances clk second by second for d, letting the client's one
// loop run each timer that fires, and checks after each second that the
// lease of ORDERS has not expired.
func runFor(t *testing.T, clk *fakeClock, store *registry.Store, p *faultProxy, d time.Duration) {
	t.Helper()
	for range int(d / time.Second) {
		armed, _ := clk.state()
		if clk.Advance(time.Second) > 0 {
			clk.settle(t, armed, 1)
		}
		store.Evict()
		if _, ok := store.Get("ORDERS", ordersID); !ok {
			t.Fatalf("the lease expired at %v; requests: %s", clk.Now().Sub(p.start), p.requests())
		}
	}
}

// A failed heartbeat does not delay the next beyond the interval: with two
// failures in a row, the third heartbeat still renews the 90 s lease in
// time, and the instance is never evicted.
func TestFailedHeartbeatsKeepTheSchedule(t *testing.T) {
	clk := newFakeClock()
	store, p, c := newProxiedClient(t, clk, nil)
	c.Start()
	defer stopClient(t, c)
	clk.settle(t, 0, 1) // registered at once
	testkit.MustGet(t, store, "ORDERS", ordersID)

	p.set(func(p *faultProxy) { p.fail = 2 })
	runFor(t, clk, store, p, 150*time.Second)
	p.wantRequests(t, "POST 0s 204, PUT 30s 503, PUT 1m0s 503, PUT 1m30s 200, PUT 2m0s 200, PUT 2m30s 200")
}

// A heartbeat that times out backs off, as Java's: the next comes after
// two intervals, the one after a timeout again after four, and a success
// resets the interval.
func TestTimedOutHeartbeatBacksOff(t *testing.T) {
	clk := newFakeClock()
	_, p, c := newProxiedClient(t, clk, func(cfg *Config) { cfg.ReadTimeout = 200 * time.Millisecond })
	c.Start()
	defer stopClient(t, c)
	clk.settle(t, 0, 1)

	p.set(func(p *faultProxy) { p.hang = 2 })
	next := func() time.Duration {
		_, due := clk.state()
		return due[0].Sub(p.start)
	}
	for _, want := range []time.Duration{30 * time.Second, 90 * time.Second, 210 * time.Second, 240 * time.Second} {
		if got := next(); got != want {
			t.Fatalf("next heartbeat at %v, want %v; requests: %s", got, want, p.requests())
		}
		armed, _ := clk.state()
		clk.Advance(want - clk.Now().Sub(p.start))
		clk.settle(t, armed, 1)
	}
	p.wantRequests(t, "POST 0s 204, PUT 30s -1, PUT 1m30s -1, PUT 3m30s 200, PUT 4m0s 200")
}

// Status changes, on-demand or over the limit, leave the heartbeats where
// they were: the next one still comes one interval after the last.
func TestStatusChangesKeepTheHeartbeats(t *testing.T) {
	clk := newFakeClock()
	store, p, c := newProxiedClient(t, clk, nil)
	kicks := make(chan bool, 10)
	c.reg.onKick = func(registered bool) { kicks <- registered }
	c.Start()
	defer stopClient(t, c)
	clk.settle(t, 0, 1)
	runFor(t, clk, store, p, 40*time.Second) // the heartbeat at 30s; the next is due at 60s

	dueAt := func() time.Duration {
		_, due := clk.state()
		if len(due) != 1 {
			t.Fatalf("pending timers %v", due)
		}
		return due[0].Sub(p.start)
	}
	// Two changes register at once (the burst), a third is over the limit.
	for _, st := range []eureka.Status{eureka.StatusDown, eureka.StatusUp, eureka.StatusDown} {
		if err := c.SetStatus(st); err != nil {
			t.Fatal(err)
		}
		var registered bool
		select {
		case registered = <-kicks:
		case <-time.After(5 * time.Second):
			t.Fatal("the change was not handled")
		}
		if got := dueAt(); got != 60*time.Second {
			t.Fatalf("after a change (registered at once: %v) the heartbeat is due at %v, want 60s", registered, got)
		}
	}
	// The heartbeat at 60s registers the change instead.
	runFor(t, clk, store, p, 50*time.Second)
	if i := testkit.MustGet(t, store, "ORDERS", ordersID); i.Status != eureka.StatusDown {
		t.Errorf("status %v after the next heartbeat", i.Status)
	}
	p.wantRequests(t, "POST 0s 204, PUT 30s 200, POST 40s 204, POST 40s 204, POST 1m0s 204, PUT 1m30s 200")
}

// Stop sends the DELETE even when its context ends while a heartbeat is
// in flight, bounded by a ReadTimeout of its own; and when that heartbeat
// then gets 404, the client does not register again.
func TestStopCancelsWhenItsContextEnds(t *testing.T) {
	for _, answerDelete := range []bool{true, false} {
		clk := newFakeClock()
		store, srv := newLeaseServer(t, clk)
		next := proxyTo(t, srv)
		deleted := make(chan struct{})
		t0 := clk.Now()
		p := newFaultProxy(t, clk, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodPut && clk.Now().After(t0):
				// Held until the DELETE is through, then answered 404.
				select {
				case <-deleted:
					w.WriteHeader(http.StatusNotFound)
				case <-r.Context().Done():
				}
				return
			case r.Method == http.MethodDelete && !answerDelete:
				close(deleted)
				<-r.Context().Done()
				return
			case r.Method == http.MethodDelete:
				next.ServeHTTP(w, r)
				close(deleted)
				return
			}
			next.ServeHTTP(w, r)
		}))
		const readTimeout = time.Second
		c := newClockedClient(t, clk, p.url(), func(cfg *Config) { cfg.ReadTimeout = readTimeout })
		c.Start()
		clk.settle(t, 0, 1)
		clk.Advance(30 * time.Second)
		<-p.beats // the heartbeat is in flight

		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		began := time.Now()
		err := c.Stop(ctx)
		took := time.Since(began)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Stop: %v, want the context's deadline", err)
		}
		select {
		case <-deleted:
		default:
			t.Fatalf("no DELETE sent; requests: %s", p.requests())
		}
		if _, ok := store.Get("ORDERS", ordersID); ok == answerDelete {
			t.Errorf("DELETE answered %v: registered %v", answerDelete, ok)
		}
		switch {
		case answerDelete && took > readTimeout/2:
			t.Errorf("Stop took %v: it waited for the heartbeat", took)
		case !answerDelete && (took < readTimeout/2 || took > readTimeout+time.Second):
			t.Errorf("Stop took %v waiting for an unanswered DELETE, want about ReadTimeout (%v)", took, readTimeout)
		}
		loopDone := make(chan struct{})
		go func() { c.wg.Wait(); close(loopDone) }()
		select {
		case <-loopDone:
		case <-time.After(5 * time.Second):
			t.Fatal("the registration loop did not end")
		}
		if got := p.requests(); strings.Count(got, "POST") != 1 {
			t.Errorf("registered again after Stop: %s", got)
		}
	}
}

// A failed poll (not a timeout) is retried after the interval, not later.
func TestFailedPollKeepsTheInterval(t *testing.T) {
	clk := newFakeClock()
	f := newFakeEureka(t)
	f.full = netflixApps("1", "UP_1_", inApp("ORDERS", "h1", "UP", "ADDED"))
	c, err := New(Config{ServiceURLs: []string{f.url()}, DisableWatch: true, clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	defer stopClient(t, c)
	<-c.Ready()
	clk.settle(t, 0, 1)
	f.set(func(f *fakeEureka) { f.deltaStatus = http.StatusInternalServerError; f.full = "not json" })
	start := clk.Now()
	for n := 1; n <= 3; n++ {
		armed, _ := clk.state()
		clk.Advance(30 * time.Second)
		clk.settle(t, armed, 1)
		if _, due := clk.state(); due[0].Sub(start) != time.Duration(n+1)*30*time.Second {
			t.Fatalf("after failed poll %d the next is due at %v", n, due[0].Sub(start))
		}
	}
	if _, delta := f.calls(); delta != 3 {
		t.Errorf("%d deltas asked for", delta)
	}
}

// Refresh may be called while the client runs, watching or polling: it
// waits for the fetch in progress (ending a held watch rather than waiting
// for it), and the loop goes on after it. Run with -race.
func TestRefreshWhileRunning(t *testing.T) {
	s := startOurServer(t, "127.0.0.1:0")
	f := newFakeEureka(t)
	f.full = netflixApps("1", "UP_1_", inApp("ORDERS", "h1", "UP", "ADDED"))
	// A short WatchWait, so that the server's handlers of the watches
	// Refresh ends do not linger (the server does not see the client go).
	watching, err := New(Config{ServiceURLs: []string{s.URL()}, WatchWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	polling, err := New(Config{ServiceURLs: []string{f.url()}, RegistryFetchInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Client{watching, polling} {
		c.Start()
		<-c.Ready()
	}
	testkit.Eventually(t, 5*time.Second, "the watch held", func() bool {
		watching.watch.mu.Lock()
		defer watching.watch.mu.Unlock()
		return watching.watch.inFlight != nil
	})
	testkit.InParallel(4, func(g int) {
		for n := range 10 {
			testkit.MustRegister(t, s.Store, testkit.Inst("ORDERS", "g"+strconv.Itoa(g)+"-"+strconv.Itoa(n)), false)
			for _, c := range []*Client{watching, polling} {
				began := time.Now()
				if err := c.Refresh(); err != nil {
					t.Error(err)
				}
				if took := time.Since(began); took > 5*time.Second {
					t.Errorf("Refresh took %v", took)
				}
			}
		}
	})
	if got := len(watching.AllInstances("ORDERS")); got != 40 {
		t.Errorf("after the refreshes the watching client holds %d instances", got)
	}
	// The loop watches on.
	testkit.MustRegister(t, s.Store, testkit.Inst("ORDERS", "later"), false)
	testkit.Eventually(t, 5*time.Second, "a change after the refreshes", func() bool { return hasID(watching.Instances("ORDERS"), "later") })
	if ids(polling.Instances("ORDERS")) != "h1=UP" {
		t.Errorf("polling client holds %s", ids(polling.Instances("ORDERS")))
	}
	stopClient(t, watching)
	stopClient(t, polling)
	// The server goes on holding the watches the client left; a change
	// ends them before the server stops (registry/httpapi races when it
	// stops with watches held).
	testkit.MustRegister(t, s.Store, testkit.Inst("ORDERS", "last"), false)
}
