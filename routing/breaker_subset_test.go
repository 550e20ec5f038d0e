package routing

import (
	"fmt"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// subsetBreakerRules route ORDERS' requests with X-Canary: 1 to its
// canary subset, the others to its stable one.
const subsetBreakerRules = `
apps:
  orders:
    default: {track: stable}
    rules:
      - match: {header: {X-Canary: "1"}}
        to: [{select: {track: canary}}]
    breaker: {per_subset: %s, min_requests: 4, open: 5s, half_open_requests: 1}
`

func newSubsetBreakerRouter(t *testing.T, perSubset string) *breakerRouter {
	t.Helper()
	var list []*eureka.InstanceInfo
	for _, id := range []string{"stable-1", "stable-2", "canary-1"} {
		i := inst("ORDERS", id, true, false)
		i.Metadata = map[string]string{"track": id[:len(id)-2]}
		list = append(list, i)
	}
	return newBreakerRouterOf(t, fmt.Sprintf(subsetBreakerRules, perSubset), map[string][]*eureka.InstanceInfo{"ORDERS": list})
}

// askTrack routes a request to ORDERS, to its canary subset when canary,
// and decides it.
func (b *breakerRouter) askTrack(canary bool) (Route, int) {
	req := client("10.0.0.1")
	if canary {
		req.Header = header{"X-Canary": "1"}
	}
	rt, _, _ := b.Route(nil, []byte("/orders/x"), req)
	b.Limit(&rt, req)
	return rt, rt.Answer.Status
}

// failCanary sends n requests to the canary subset, each failing 500.
func (b *breakerRouter) failCanary(n int) {
	for range n {
		rt, _ := b.askTrack(true)
		rt.Guard.Done(500, 0, false)
	}
}

// With per_subset, a canary subset whose requests fail opens its own
// breaker: its requests get the 503 naming the app and the subset, and
// are not sent to the stable subset; the stable subset's requests go on
// to stable instances throughout; the canary's breaker probes and closes
// on its own.
func TestBreakerPerSubset(t *testing.T) {
	b := newSubsetBreakerRouter(t, "true")
	for range 4 {
		rt, s := b.askTrack(true)
		if s != 0 {
			t.Fatalf("canary refused before min_requests: %d", s)
		}
		rt.Guard.Done(500, 0, false)
	}
	b.movesAre(t, "ORDERS track=canary open")
	rt, s := b.askTrack(true)
	if s != 503 || rt.Instances != nil || rt.Limit.OpenSubset() != "track=canary" {
		t.Fatalf("canary while open: %d %v subset %q", s, rt.Instances, rt.Limit.OpenSubset())
	}
	if want := "circuit open: ORDERS's subset track=canary is failing, its requests are refused for 5s before 1 probes\n"; rt.Answer.Reason != want {
		t.Errorf("reason %q, want %q", rt.Answer.Reason, want)
	}
	for range 10 {
		rt, s := b.askTrack(false)
		if s != 0 || rt.Subset == nil || rt.Subset.Label() != "track=stable" {
			t.Fatalf("stable while the canary is open: %d %v", s, rt.Subset)
		}
		for _, i := range rt.Instances {
			if i.Metadata["track"] != "stable" {
				t.Fatalf("stable request given %s", i.ID())
			}
		}
		rt.Guard.Done(200, 0, false)
	}
	b.clock.Advance(5 * time.Second)
	p, s := b.askTrack(true)
	if s != 0 || p.Subset.Label() != "track=canary" {
		t.Fatalf("the canary's probe: %d", s)
	}
	p.Guard.Done(200, 0, false)
	b.movesAre(t, "ORDERS track=canary open", "ORDERS track=canary half_open", "ORDERS track=canary closed")
	if _, s := b.askTrack(true); s != 0 {
		t.Errorf("canary closed again: %d", s)
	}
}

// Without per_subset, the one breaker of the app opens on the canary's
// failures and refuses the stable subset's requests too: what
// per_subset is for.
func TestBreakerPerAppCoversSubsets(t *testing.T) {
	b := newSubsetBreakerRouter(t, "false")
	b.failCanary(4)
	b.movesAre(t, "ORDERS open")
	rt, s := b.askTrack(false)
	if s != 503 || rt.Limit.OpenSubset() != "" {
		t.Errorf("stable under the app's open breaker: %d subset %q", s, rt.Limit.OpenSubset())
	}
}

// With per_subset, a request routed to no subset of the rules (an app
// without rules, here BILLING through defaults) has the app's breaker.
func TestBreakerPerSubsetWithoutRules(t *testing.T) {
	b := newBreakerRouter(t, "defaults:\n  breaker: {per_subset: true, min_requests: 2}\n")
	b.answer("billing", 2, 500, 0)
	b.movesAre(t, "BILLING open")
	if rt, s := b.ask("billing"); s != 503 || rt.Limit.OpenSubset() != "" {
		t.Errorf("billing: %d subset %q", s, rt.Limit.OpenSubset())
	}
}

// A request through a subset's closed breaker allocates nothing, as one
// through the app's.
func TestSubsetBreakerAllocatesNothing(t *testing.T) {
	b := newSubsetBreakerRouter(t, "true")
	req := client("10.0.0.1")
	req.Header = header{"X-Canary": "1"}
	once := func() {
		var buf [512]byte
		rt, _, _ := b.Route(buf[:0], []byte("/orders/x"), req)
		b.Limit(&rt, req)
		if rt.Guard.b == nil || rt.Guard.b.subset != "track=canary" {
			t.Fatalf("passed through %+v, want the canary's breaker", rt.Guard.b)
		}
		rt.Guard.Done(200, time.Millisecond, false)
	}
	once()
	if n := testing.AllocsPerRun(1000, once); n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}

// A reload of the rules says closed for a subset's breaker that was
// open, as for an app's: the new document's start closed.
func TestSubsetBreakerClosedOnReload(t *testing.T) {
	b := newSubsetBreakerRouter(t, "true")
	b.failCanary(4)
	rules, err := ParseRules("rules.yaml", []byte(fmt.Sprintf(subsetBreakerRules, "true")))
	if err != nil {
		t.Fatal(err)
	}
	b.SetRules(rules)
	b.movesAre(t, "ORDERS track=canary open", "ORDERS track=canary closed")
	if _, s := b.askTrack(true); s != 0 {
		t.Errorf("the canary under the new rules: %d", s)
	}
}
