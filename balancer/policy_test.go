package balancer

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// With the middle instance ejected, the other two share the calls evenly:
// the rotation spends a turn on the skipped instance instead of giving its
// turn to the next one.
func TestRoundRobinFairUnderSkips(t *testing.T) {
	list := instances(3)
	b := New(staticInstancer{"A": list}, Config{MaxFails: 1})
	b.ReportFailure(list[1])
	counts := map[string]int{}
	const picks = 3000
	for range picks {
		i, _ := b.Pick("A")
		counts[i.ID()]++
	}
	if counts["i1"] != 0 {
		t.Fatalf("ejected instance picked: %v", counts)
	}
	for _, id := range []string{"i0", "i2"} {
		if share := float64(counts[id]) / picks; share < 0.48 || share > 0.52 {
			t.Errorf("%s got %.1f%% of the picks: %v", id, 100*share, counts)
		}
	}
}

// The same holds for candidates that the caller marks unusable (a Caddy
// pool's unavailable upstreams), and an unusable pool yields nothing.
func TestRoundRobinOverCandidates(t *testing.T) {
	var rr RoundRobin
	down := 1
	c := NewCandidates("A", 3, nil, func(i int) bool { return i != down }, nil)
	counts := make([]int, 3)
	for range 300 {
		i, ok := rr.Choose(c)
		if !ok {
			t.Fatal("no candidate")
		}
		counts[i]++
	}
	if counts[0] != 150 || counts[1] != 0 || counts[2] != 150 {
		t.Errorf("counts %v, want 150/0/150", counts)
	}
	if i, ok := rr.Choose(NewCandidates("A", 3, nil, func(int) bool { return false }, nil)); ok || i != -1 {
		t.Errorf("nothing usable: %d %t", i, ok)
	}
	if _, ok := rr.Choose(Candidates{App: "A"}); ok {
		t.Error("no candidates: chose one")
	}
	// Instances of another length than the pool are ignored.
	if c := NewCandidates("A", 2, instances(3), nil, nil); c.Instance(0) != nil {
		t.Error("mismatched instances kept")
	}
}

// switching is an Instancer whose list changes under the pickers.
type switching struct {
	list atomic.Pointer[[]*eureka.InstanceInfo]
}

func (s *switching) Instances(string) []*eureka.InstanceInfo { return *s.list.Load() }

// Concurrent picks while the list changes and instances are ejected never
// panic, and never starve an instance that stays in the list.
func TestRoundRobinWhileTheListChanges(t *testing.T) {
	all := instances(5)
	lists := [][]*eureka.InstanceInfo{all[:3], all[1:5], {all[1], all[2]}}
	src := new(switching)
	src.list.Store(&lists[0])
	b := New(src, Config{MaxFails: 1})
	b.ReportFailure(all[2]) // in every list, so never forgotten

	const callers, per = 8, 3000
	var mu sync.Mutex
	total := map[string]int{}
	testkit.InParallel(callers, func(c int) {
		counts := map[string]int{}
		for n := range per {
			if n%50 == c { // each caller changes the list now and then
				src.list.Store(&lists[(n/50+c)%len(lists)])
			}
			i, err := b.Pick("A")
			if err != nil {
				t.Error(err)
				return
			}
			counts[i.ID()]++
		}
		mu.Lock()
		for id, n := range counts {
			total[id] += n
		}
		mu.Unlock()
	})
	// i1 is in every list: from a third of the picks to all of them.
	if total["i1"] < callers*per/4 {
		t.Errorf("i1 starved: %v", total)
	}
	for _, id := range []string{"i0", "i3", "i4"} {
		if total[id] == 0 {
			t.Errorf("%s starved: %v", id, total)
		}
	}
	if total["i2"] != 0 {
		t.Errorf("ejected instance picked: %v", total)
	}
}

// first is a policy written outside the package's own: the first usable
// candidate.
type first struct{}

func (first) Choose(c Candidates) (int, bool) {
	for i := range c.Len() {
		if c.Usable(i) {
			return i, true
		}
	}
	return -1, false
}

// A new policy is a type with a Choose method, and ejection applies to it
// without its knowing.
func TestCustomPolicyGetsEjection(t *testing.T) {
	list := instances(3)
	b := New(staticInstancer{"A": list}, Config{Policy: first{}, MaxFails: 1})
	if i, _ := b.Pick("A"); i.ID() != "i0" {
		t.Fatalf("picked %s", i.ID())
	}
	b.ReportFailure(list[0])
	if i, _ := b.Pick("A"); i.ID() != "i1" {
		t.Fatalf("with i0 ejected, picked %s", i.ID())
	}
	b.ReportFailure(list[1])
	b.ReportFailure(list[2])
	if i, err := b.Pick("A"); err != nil || i.ID() != "i0" {
		t.Fatalf("with all ejected, picked %v %v", i, err)
	}
}
