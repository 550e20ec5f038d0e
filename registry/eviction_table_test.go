package registry

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// docEvictionLimit is protocol doc 4.12 step 3, as written there:
// registrySize - (int)(registrySize x renewalPercentThreshold). The rows
// below spell their limits out; this only checks the table's arithmetic.
func docEvictionLimit(size int, percent float64) int {
	return size - int(float64(size)*percent)
}

// evictionCapRow is a registry of size leases, expired of which have
// expired, evicted by runs 60 s apart with self-preservation off.
type evictionCapRow struct {
	section    string
	size       int
	expired    int
	percent    float64  // renewalPercentThreshold; 0 the default 0.85
	wantPerRun []int    // evictions of each run
	arithmetic []string // how each follows from the formula
}

// TestEvictionCapTable checks that one eviction run removes at most
// size - (int)(size x renewalPercentThreshold) leases, and never one that
// has not expired (4.12 steps 2 to 4), and that each eviction lowers the
// expected number of renewing clients (step 6, 4.4).
func TestEvictionCapTable(t *testing.T) {
	rows := []evictionCapRow{
		{section: "4.12 step 3 (doc example)", size: 1, expired: 1, wantPerRun: []int{1}, arithmetic: []string{"1-(int)0.85"}},
		{section: "4.12 step 3 (doc example)", size: 10, expired: 10, wantPerRun: []int{2, 2, 1, 1, 1, 1, 1, 1},
			arithmetic: []string{"10-(int)8.5", "8-(int)6.8", "6-(int)5.1", "5-(int)4.25", "4-(int)3.4", "3-(int)2.55", "2-(int)1.7", "1-(int)0.85"}},
		{section: "4.12 step 3 (doc example)", size: 100, expired: 100, wantPerRun: []int{15, 13}, arithmetic: []string{"100-85", "85-(int)72.25"}},
		{section: "4.12 step 4", size: 100, expired: 5, wantPerRun: []int{5, 0}, arithmetic: []string{"min(5, 100-85)", "min(0, 95-80)"}},
		{section: "4.12 step 3", size: 20, expired: 20, wantPerRun: []int{3, 3, 3}, arithmetic: []string{"20-17", "17-(int)14.45", "14-(int)11.9"}},
		{section: "4.12 step 3", size: 13, expired: 4, wantPerRun: []int{2, 2, 0}, arithmetic: []string{"min(4, 13-(int)11.05)", "min(2, 11-(int)9.35)", "min(0, 9-(int)7.65)"}},
		{section: "4.12 step 3", size: 7, expired: 7, wantPerRun: []int{2, 1}, arithmetic: []string{"7-(int)5.95", "5-(int)4.25"}},
		{section: "4.12 step 3", size: 3, expired: 1, wantPerRun: []int{1}, arithmetic: []string{"min(1, 3-(int)2.55)"}},
		{section: "4.12 step 3", size: 2, expired: 2, wantPerRun: []int{1, 1}, arithmetic: []string{"2-(int)1.7", "1-(int)0.85"}},
		{section: "4.12 step 4", size: 10, expired: 0, wantPerRun: []int{0}, arithmetic: []string{"min(0, 10-(int)8.5)"}},
		{section: "4.12 step 3", size: 0, expired: 0, wantPerRun: []int{0}, arithmetic: []string{"0-0"}},
		{section: "4.12 step 3, renewalPercentThreshold 0.5", percent: 0.5, size: 10, expired: 10, wantPerRun: []int{5, 3, 1, 1},
			arithmetic: []string{"10-5", "5-(int)2.5", "2-1", "1-(int)0.5"}},
		{section: "4.12 step 3, renewalPercentThreshold 1", percent: 1, size: 5, expired: 5, wantPerRun: []int{0}, arithmetic: []string{"5-5"}},
	}
	for _, row := range rows {
		name := fmt.Sprintf("size %d expired %d percent %v", row.size, row.expired, row.percent)
		t.Run(name, func(t *testing.T) {
			percent := row.percent
			if percent == 0 {
				percent = 0.85
			}
			// The table's own arithmetic, from the doc's formula.
			size, expired := row.size, row.expired
			for run, want := range row.wantPerRun {
				if n := min(expired, docEvictionLimit(size, percent)); n != want {
					t.Fatalf("table row %s: run %d: the formula gives %d, the row says %d", row.section, run, n, want)
				}
				size, expired = size-want, expired-want
			}

			s, clock := newTestStore(t, Config{DisableSelfPreservation: true, RenewalPercentThreshold: row.percent})
			apps := []string{"A", "B", "C"}
			for n := range row.expired {
				mustRegister(t, s, inst(apps[n%3], fmt.Sprintf("old-%d", n)), false)
			}
			// 91 s without a renew: expired (4.3, durationInSecs 90).
			clock.Advance(91 * time.Second)
			var fresh [][2]string
			for n := range row.size - row.expired {
				app, id := apps[n%3], fmt.Sprintf("new-%d", n)
				mustRegister(t, s, inst(app, id), false)
				fresh = append(fresh, [2]string{app, id})
			}
			wantLen, wantExpected := row.size, 1+row.size // Spring's start of 1, +1 per registration
			for run, want := range row.wantPerRun {
				if run > 0 {
					clock.Advance(60 * time.Second) // on time: no compensation
					for _, f := range fresh {
						s.Renew(f[0], f[1], RenewRequest{})
					}
				}
				ev := s.Evict()
				expectRow(t, row.section, fmt.Sprintf("run %d (%s): evicted", run, row.arithmetic[run]), len(ev), want)
				for _, id := range ev {
					if !strings.HasPrefix(id, "old-") {
						t.Errorf("protocol doc 4.12 step 2: run %d evicted %s, which has not expired", run, id)
					}
				}
				wantLen, wantExpected = wantLen-len(ev), wantExpected-len(ev)
				expectRow(t, row.section, fmt.Sprintf("run %d: registry size", run), s.Len(), wantLen)
				expectRow(t, "4.12 step 6 / 4.4", fmt.Sprintf("run %d: expected renewing clients", run), s.Stats().SelfPreservation().ExpectedRenewingClients, wantExpected)
			}
		})
	}
}

// TestEvictionChoiceIsRandom checks that when a run may not evict every
// expired lease it picks them at random across apps (4.12 step 5): over 20
// seeds, the 3 of 20 evicted are spread.
func TestEvictionChoiceIsRandom(t *testing.T) {
	chosen, apps := map[string]int{}, map[string]int{}
	for seed := range 20 {
		s, clock := newTestStore(t, Config{DisableSelfPreservation: true, Rand: rand.New(rand.NewPCG(uint64(seed), 7))})
		for n := range 20 {
			mustRegister(t, s, inst([]string{"A", "B"}[n%2], fmt.Sprintf("i%02d", n)), false)
		}
		clock.Advance(100 * time.Second)
		ev := s.Evict()
		expectRow(t, "4.12 step 3", "evicted of 20 expired (20-17)", len(ev), 3)
		for _, id := range ev {
			chosen[id]++
			var n int
			fmt.Sscanf(id, "i%d", &n)
			apps[[]string{"A", "B"}[n%2]]++
		}
	}
	if len(chosen) < 10 || len(apps) != 2 {
		t.Errorf("protocol doc 4.12 step 5: not spread at random: %d distinct instances and %d apps chosen in 20 runs", len(chosen), len(apps))
	}
}

// compensationRow is one lease, registered at 0 and never renewed, and
// eviction runs at the given times after that (the first run has no
// previous one).
type compensationRow struct {
	section   string
	name      string
	runs      []time.Duration
	evictedAt int // index of the run that evicts the lease; -1 none
	// arithmetic is the expiry check at the run that decides:
	// age > 90 s + additionalLeaseMs.
	arithmetic string
}

// TestEvictionCompensationTable checks late-run compensation (4.12): a run
// that comes more than 60 s after the previous one extends every lease by
// the lateness, additionalLeaseMs = max(0, elapsed - 60 s), and a lease
// expires when now > lastRenew + 90 s + additionalLeaseMs (4.3).
func TestEvictionCompensationTable(t *testing.T) {
	s := time.Second
	rows := []compensationRow{
		{section: "4.12 / 4.3", name: "on time: expired after 90 s", runs: []time.Duration{0, 60 * s, 120 * s}, evictedAt: 2, arithmetic: "120 > 90+0"},
		{section: "4.12 (first run)", name: "the first run has no grace", runs: []time.Duration{100 * s}, evictedAt: 0, arithmetic: "100 > 90+0"},
		{section: "4.12 compensation", name: "120 s late: 120 s of grace", runs: []time.Duration{0, 180 * s}, evictedAt: -1, arithmetic: "180 > 90+120 is false"},
		{section: "4.12 compensation", name: "then the next on-time run evicts", runs: []time.Duration{0, 180 * s, 240 * s}, evictedAt: 2, arithmetic: "240 > 90+0"},
		{section: "4.12 compensation", name: "31 s late at 91 s: kept", runs: []time.Duration{0, 91 * s}, evictedAt: -1, arithmetic: "91 > 90+31 is false"},
		{section: "4.12 compensation", name: "31 s late at 151 s: evicted", runs: []time.Duration{0, 60 * s, 151 * s}, evictedAt: 2, arithmetic: "151 > 90+31"},
		{section: "4.12 compensation", name: "180 s late at 300 s: evicted", runs: []time.Duration{0, 60 * s, 300 * s}, evictedAt: 2, arithmetic: "300 > 90+180"},
		{section: "4.12 compensation (max 0)", name: "an early run gets no negative grace", runs: []time.Duration{0, 60 * s, 100 * s}, evictedAt: 2, arithmetic: "100 > 90+max(0, 40-60)"},
		{section: "4.3 expiry", name: "exactly 90 s: kept", runs: []time.Duration{0, 60 * s, 90 * s}, evictedAt: -1, arithmetic: "90 > 90+0 is false"},
		{section: "4.3 expiry", name: "90 s + 1 ms: evicted", runs: []time.Duration{0, 60 * s, 90*s + time.Millisecond}, evictedAt: 2, arithmetic: "90.001 > 90+0"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			st, clock := newTestStore(t, Config{DisableSelfPreservation: true})
			mustRegister(t, st, inst("A", "x"), false)
			start := clock.Now()
			at := -1
			for n, d := range row.runs {
				clock.Advance(start.Add(d).Sub(clock.Now()))
				if ev := st.Evict(); len(ev) > 0 {
					if at >= 0 || len(ev) != 1 || ev[0] != "x" {
						t.Fatalf("protocol doc %s: run %d evicted %v", row.section, n, ev)
					}
					at = n
				}
			}
			expectRow(t, row.section, fmt.Sprintf("the run (of %v; %s) that evicts", row.runs, row.arithmetic), at, row.evictedAt)
		})
	}
}
