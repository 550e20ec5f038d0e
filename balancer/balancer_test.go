package balancer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// Both registries can feed a balancer.
var (
	_ Instancer = (*registry.Store)(nil)
	_ Instancer = (*discovery.Client)(nil)
)

type staticInstancer map[string][]*eureka.InstanceInfo

func (s staticInstancer) Instances(app string) []*eureka.InstanceInfo { return s[app] }

func instances(n int, md ...map[string]string) []*eureka.InstanceInfo {
	out := make([]*eureka.InstanceInfo, n)
	for k := range out {
		out[k] = &eureka.InstanceInfo{InstanceID: "i" + strconv.Itoa(k), HostName: "127.0.0.1", App: "A",
			Status: eureka.StatusUp, Port: eureka.Port{Number: 9000 + k, Enabled: true}}
		if k < len(md) {
			out[k].Metadata = md[k]
		}
	}
	return out
}

type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeNow) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeNow) Advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

func TestRoundRobinExactUnderConcurrency(t *testing.T) {
	b := New(staticInstancer{"A": instances(3)}, Config{})
	const callers, per = 8, 300
	counts := make([]map[string]int, callers)
	var wg sync.WaitGroup
	for c := range callers {
		counts[c] = map[string]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				i, err := b.Pick("A")
				if err != nil {
					t.Error(err)
					return
				}
				counts[c][i.ID()]++
			}
		}()
	}
	wg.Wait()
	total := map[string]int{}
	for _, c := range counts {
		for id, n := range c {
			total[id] += n
		}
	}
	for _, id := range []string{"i0", "i1", "i2"} {
		if total[id] != callers*per/3 {
			t.Errorf("%s picked %d times, want exactly %d", id, total[id], callers*per/3)
		}
	}
	// Sequentially, each is picked once per three calls.
	seen := map[string]bool{}
	for range 3 {
		i, _ := b.Pick("A")
		seen[i.ID()] = true
	}
	if len(seen) != 3 {
		t.Errorf("three calls picked %v", seen)
	}
}

func TestCountersArePerApp(t *testing.T) {
	a, c := instances(2), instances(2)
	b := New(staticInstancer{"A": a, "C": c}, Config{})
	b.Pick("A")
	if i, _ := b.Pick("C"); i.ID() != "i0" {
		t.Errorf("C's first pick is %s: counters are shared between apps", i.ID())
	}
	if _, err := b.Pick("NONE"); err != ErrNoInstances {
		t.Errorf("unknown app: %v", err)
	}
}

func TestEjectionAndCooldown(t *testing.T) {
	clock := &fakeNow{t: time.Unix(1000, 0)}
	list := instances(3)
	b := New(staticInstancer{"A": list}, Config{MaxFails: 2, Cooldown: 10 * time.Second, Now: clock.Now})
	b.ReportFailure(list[1])
	picks := func(n int) map[string]int {
		m := map[string]int{}
		for range n {
			i, _ := b.Pick("A")
			m[i.ID()]++
		}
		return m
	}
	if got := picks(30); got["i1"] != 10 {
		t.Fatalf("one failure (under MaxFails) changed the rotation: %v", got)
	}
	b.ReportFailure(list[1])
	if got := picks(30); got["i1"] != 0 || got["i0"]+got["i2"] != 30 {
		t.Fatalf("ejected instance still picked: %v", got)
	}
	clock.Advance(10*time.Second + time.Nanosecond)
	if got := picks(30); got["i1"] != 10 {
		t.Fatalf("instance did not return after its cool-down: %v", got)
	}
	// A success ends the failure run.
	b.ReportSuccess(list[1])
	b.ReportFailure(list[1])
	if got := picks(30); got["i1"] != 10 {
		t.Fatalf("failures counted across a success: %v", got)
	}
}

func TestNeverZeroCandidates(t *testing.T) {
	list := instances(2)
	b := New(staticInstancer{"A": list}, Config{MaxFails: 1})
	b.ReportFailure(list[0])
	b.ReportFailure(list[1])
	for range 4 {
		if i, err := b.Pick("A"); err != nil || i == nil {
			t.Fatalf("all ejected: %v %v", i, err)
		}
	}
}

func TestWeightedAndRandom(t *testing.T) {
	list := instances(2, map[string]string{"weight": "3"}, map[string]string{"weight": "1"})
	b := New(staticInstancer{"A": list}, Config{Policy: new(Weighted)})
	counts := map[string]int{}
	for range 4000 {
		i, _ := b.Pick("A")
		counts[i.ID()]++
	}
	if r := float64(counts["i0"]) / float64(counts["i1"]); r < 2.5 || r > 3.5 {
		t.Errorf("weight 3:1 gave %v", counts)
	}
	r := New(staticInstancer{"A": instances(4)}, Config{Policy: new(Random)})
	seen := map[string]bool{}
	for range 200 {
		i, _ := r.Pick("A")
		seen[i.ID()] = true
	}
	if len(seen) != 4 {
		t.Errorf("random reached %d of 4", len(seen))
	}
}

func TestZonePreferring(t *testing.T) {
	list := instances(3, map[string]string{"zone": "a"}, map[string]string{"zone": "b"}, map[string]string{"zone": "a"})
	b := New(staticInstancer{"A": list}, Config{Policy: &ZonePreferring{Zone: "a"}, MaxFails: 1})
	counts := map[string]int{}
	for range 10 {
		i, _ := b.Pick("A")
		counts[i.ID()]++
	}
	if counts["i1"] != 0 || counts["i0"] != 5 || counts["i2"] != 5 {
		t.Errorf("zone a: %v", counts)
	}
	b.ReportFailure(list[0])
	b.ReportFailure(list[2])
	if i, _ := b.Pick("A"); i.ID() != "i1" {
		t.Errorf("with zone a ejected, picked %s", i.ID())
	}
}

func TestHTTPClientSpreadsAndRetries(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	mk := func(name string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits[name]++
			mu.Unlock()
			io.WriteString(w, name+" "+r.URL.Path)
		}))
	}
	s1, s2 := mk("one"), mk("two")
	defer s1.Close()
	defer s2.Close()
	deadAddr := testkit.FreeAddr(t)
	inst := func(id, addr string) *eureka.InstanceInfo {
		u, _ := url.Parse("http://" + addr)
		port, _ := strconv.Atoi(u.Port())
		return &eureka.InstanceInfo{InstanceID: id, HostName: u.Hostname(), App: "INVENTORY", Status: eureka.StatusUp,
			Port: eureka.Port{Number: port, Enabled: true}}
	}
	src := staticInstancer{"INVENTORY": {inst("a", s1.Listener.Addr().String()), inst("b", deadAddr), inst("c", s2.Listener.Addr().String())}}
	c := &HTTPClient{Balancer: New(src, Config{})}
	for range 6 {
		req, _ := http.NewRequest("GET", "http://inventory/items/7", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "one /items/7" && string(body) != "two /items/7" {
			t.Fatalf("body %q", body)
		}
	}
	if hits["one"] < 2 || hits["two"] < 2 {
		t.Errorf("calls not spread: %v", hits)
	}
	if _, err := c.Do(mustRequest("http://unknown/")); err == nil {
		t.Error("call to an unknown app succeeded")
	}
}

func mustRequest(u string) *http.Request {
	r, _ := http.NewRequest("GET", u, nil)
	return r
}

func BenchmarkPick(b *testing.B) {
	bal := New(staticInstancer{"A": instances(3)}, Config{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bal.Pick("A")
		}
	})
}

func BenchmarkPickSerial(b *testing.B) {
	bal := New(staticInstancer{"A": instances(3)}, Config{})
	b.ReportAllocs()
	for range b.N {
		bal.Pick("A")
	}
}

func BenchmarkPickStore(b *testing.B) {
	s := registry.New(registry.Config{})
	for n := range 3 {
		i := testkit.SampleInstance(n)
		s.Register(i, false)
	}
	bal := New(s, Config{})
	app := testkit.SampleInstance(0).App
	b.ReportAllocs()
	for range b.N {
		bal.Pick(app)
	}
}

// What the balancer knows of an instance (its failures, its ejection) is
// forgotten once the instance leaves its app's list, so the state does not
// grow with every instance ever seen, and an instance that comes back
// starts afresh.
func TestForgetsDepartedInstances(t *testing.T) {
	all := instances(3)
	src := new(switching)
	set := func(list ...*eureka.InstanceInfo) { src.list.Store(&list) }
	set(all...)
	b := New(src, Config{MaxFails: 1})
	other := &eureka.InstanceInfo{InstanceID: "c0", App: "C"}
	b.ReportFailure(other) // another app's instance: A's picks leave it be
	state := func() (tracked, failing int64) { return b.tracked.Load(), b.failing.Load() }

	b.ReportFailure(all[1])
	b.Pick("A")
	if tr, f := state(); tr != 2 || f != 2 {
		t.Fatalf("while i1 is listed: %d tracked, %d failing", tr, f)
	}
	set(all[0], all[2])
	b.Pick("A")
	if tr, f := state(); tr != 1 || f != 1 {
		t.Fatalf("after i1 left: %d tracked, %d failing, want C's only", tr, f)
	}
	if _, ok := b.states.Load(instanceKey{app: "A", id: "i1"}); ok {
		t.Fatal("i1's state kept")
	}

	// A call that ends after its instance left: forgotten on the next pick
	// even though the list has not changed again.
	b.ReportFailure(all[1])
	b.Pick("A")
	if tr, f := state(); tr != 1 || f != 1 {
		t.Fatalf("late failure of a departed instance: %d tracked, %d failing", tr, f)
	}

	// Back in the list, i1 is not ejected.
	set(all...)
	counts := map[string]int{}
	for range 30 {
		i, _ := b.Pick("A")
		counts[i.ID()]++
	}
	if counts["i1"] != 10 {
		t.Fatalf("i1 back in the list: %v", counts)
	}

	// The app leaves altogether.
	b.ReportFailure(all[0])
	set()
	if _, err := b.Pick("A"); err != ErrNoInstances {
		t.Fatal(err)
	}
	if tr, f := state(); tr != 1 || f != 1 {
		t.Fatalf("after the app left: %d tracked, %d failing", tr, f)
	}
	if _, ok := b.states.Load(instanceKey{app: "C", id: "c0"}); !ok {
		t.Fatal("another app's state was forgotten")
	}
}

// Failures reported while picks forget departed instances keep the
// failing count exact: it is back to 0 when every failing instance has
// left.
func TestForgetRacesWithFailures(t *testing.T) {
	all := instances(4)
	src := new(switching)
	src.list.Store(&all)
	b := New(src, Config{MaxFails: 1})
	testkit.InParallel(4, func(w int) {
		for n := range 2000 {
			switch {
			case w == 0 && n%2 == 0:
				short := all[:2+n%3]
				src.list.Store(&short)
			case w == 0:
				src.list.Store(&all)
			case w == 1:
				b.ReportFailure(all[n%4])
			case w == 2:
				b.ReportSuccess(all[n%4])
			default:
				b.Pick("A")
			}
		}
	})
	empty := []*eureka.InstanceInfo{}
	src.list.Store(&empty)
	b.Pick("A")
	if tr, f := b.tracked.Load(), b.failing.Load(); tr != 0 || f != 0 {
		t.Fatalf("after every instance left: %d tracked, %d failing", tr, f)
	}
}

func BenchmarkPickWithState(b *testing.B) {
	list := instances(3)
	bal := New(staticInstancer{"A": list}, Config{})
	bal.ReportFailure(list[1]) // one failure, under MaxFails: tracked, not ejected
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bal.Pick("A")
		}
	})
}

// An instance that enables only its secure port is called over HTTPS on
// it, also for an http URL.
func TestHTTPClientSecurePortOnly(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "tls "+r.URL.Path)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	src := staticInstancer{"SECURE": {{InstanceID: "s", HostName: "127.0.0.1", App: "SECURE", Status: eureka.StatusUp,
		Port: eureka.Port{Number: 1, Enabled: false}, SecurePort: eureka.Port{Number: port, Enabled: true}}}}
	c := &HTTPClient{Balancer: New(src, Config{}), Client: srv.Client()}
	resp, err := c.Do(mustRequest("http://secure/items"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "tls /items" {
		t.Fatalf("body %q", body)
	}
}
