package balancer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
)

func pickIDs(b *Balancer, n int) []string {
	out := make([]string, n)
	for k := range out {
		i, _ := b.Pick("A")
		out[k] = i.ID()
	}
	return out
}

func TestLeastRequests(t *testing.T) {
	list := instances(3)
	b := New(staticInstancer{"A": list}, Config{Policy: new(LeastRequests), MaxFails: 1})

	// Nothing in flight: every instance ties, and ties go round-robin.
	if got := pickIDs(b, 6); got[0] != "i0" || got[1] != "i1" || got[2] != "i2" || got[3] != "i0" {
		t.Fatalf("ties not taken in turn: %v", got)
	}

	// A call in flight on i0: the others take the calls, in turn.
	end0 := b.Begin(list[0])
	counts := map[string]int{}
	for _, id := range pickIDs(b, 10) {
		counts[id]++
	}
	if counts["i0"] != 0 || counts["i1"] != 5 || counts["i2"] != 5 {
		t.Fatalf("with a call on i0: %v", counts)
	}
	// One on i1 as well: i2 only. Then two on i2: i0 and i1 tie at one.
	end1 := b.Begin(list[1])
	if got := pickIDs(b, 3); got[0] != "i2" || got[2] != "i2" {
		t.Fatalf("with calls on i0 and i1: %v", got)
	}
	end2a, end2b := b.Begin(list[2]), b.Begin(list[2])
	counts = map[string]int{}
	for _, id := range pickIDs(b, 10) {
		counts[id]++
	}
	if counts["i2"] != 0 || counts["i0"] != 5 || counts["i1"] != 5 {
		t.Fatalf("with 1, 1, 2 in flight: %v", counts)
	}
	// Ending a call twice counts once.
	end0()
	end0()
	end1()
	end2a()
	end2b()
	for _, inst := range list {
		if n := b.inFlight(inst.App, "", inst); n != 0 {
			t.Fatalf("%s: %d in flight after every call ended", inst.ID(), n)
		}
	}

	// Ejection applies in front of the policy: the least loaded instance
	// is skipped while ejected.
	b.ReportFailure(list[1])
	end0 = b.Begin(list[0])
	if got := pickIDs(b, 4); got[0] != "i2" || got[3] != "i2" {
		t.Fatalf("i0 busy, i1 ejected: %v", got)
	}
	end0()
}

// Over candidates that count their own calls (a Caddy pool), with some
// unusable.
func TestLeastRequestsOverCandidates(t *testing.T) {
	var lr LeastRequests
	inFlight := []int{2, 0, 5, 0}
	c := NewCandidates("A", 4, nil, func(i int) bool { return i != 3 }, func(i int) int { return inFlight[i] })
	for range 3 {
		if i, ok := lr.Choose(c); !ok || i != 1 {
			t.Fatalf("chose %d %t, want 1", i, ok)
		}
	}
	if _, ok := lr.Choose(NewCandidates("A", 2, nil, func(int) bool { return false }, nil)); ok {
		t.Fatal("chose among no usable candidate")
	}
}

// HTTPClient counts a request until its response body is closed, so a
// slow instance gets no new request while it holds one.
func TestHTTPClientCountsRequestsInFlight(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		io.WriteString(w, "slow")
	}))
	defer slow.Close()
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "fast") }))
	defer fast.Close()
	inst := func(id string, s *httptest.Server) *eureka.InstanceInfo {
		port, _ := strconv.Atoi(s.URL[len("http://127.0.0.1:"):])
		return &eureka.InstanceInfo{InstanceID: id, HostName: "127.0.0.1", App: "INVENTORY", Status: eureka.StatusUp,
			Port: eureka.Port{Number: port, Enabled: true}}
	}
	list := []*eureka.InstanceInfo{inst("a-slow", slow), inst("b-fast", fast)}
	b := New(staticInstancer{"INVENTORY": list}, Config{Policy: new(LeastRequests)})
	c := &HTTPClient{Balancer: b}
	get := func() string {
		resp, err := c.Do(mustRequest("http://inventory/"))
		if err != nil {
			t.Error(err)
			return ""
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); get() }() // the first tie goes to a-slow
	<-arrived
	for range 4 {
		if got := get(); got != "fast" {
			t.Fatalf("a request went to the busy instance: %q", got)
		}
	}
	close(release)
	wg.Wait()
	for _, i := range list {
		if n := b.inFlight(i.App, "", i); n != 0 {
			t.Errorf("%s: %d in flight after every body was closed", i.ID(), n)
		}
	}
}
