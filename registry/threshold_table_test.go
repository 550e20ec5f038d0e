package registry

import (
	"fmt"
	"testing"
	"time"
)

// docThreshold is protocol doc 4.6's formula, as written there:
// (int)(expected x (60.0 / intervalSeconds) x percent). The rows below
// spell their thresholds out; this only checks the table's arithmetic.
func docThreshold(expected int, intervalSeconds, percent float64) int {
	return int(float64(expected) * (60.0 / intervalSeconds) * percent)
}

// checkDocArithmetic stops the test when a table row's threshold is not
// what docThreshold gives for its expected count: the row itself is wrong.
func checkDocArithmetic(t *testing.T, section string, expected int, intervalSeconds, percent float64, wantThreshold int) {
	t.Helper()
	if n := docThreshold(expected, intervalSeconds, percent); n != wantThreshold {
		t.Fatalf("table row %s: the formula gives %d, the row says %d", section, n, wantThreshold)
	}
}

// expectCountAndThreshold checks the expected number of renewing clients
// and the threshold s reports against a table row; countWhy and
// thresholdWhy, where not "", say in parentheses how the row got them.
func expectCountAndThreshold(t *testing.T, s *Store, section, countWhy, thresholdWhy string, wantCount, wantThreshold int) {
	t.Helper()
	sp := s.Stats().SelfPreservation()
	expectRow(t, section, "expected renewing clients"+parenthesized(countWhy), sp.ExpectedRenewingClients, wantCount)
	expectRow(t, section, "threshold"+parenthesized(thresholdWhy), sp.Threshold, wantThreshold)
}

// parenthesized is " (why)", or "" for no why.
func parenthesized(why string) string {
	if why == "" {
		return ""
	}
	return " (" + why + ")"
}

// thresholdRow is an expected number of renewing clients, set as
// openForTraffic sets it, and the renews-per-minute threshold it gives.
type thresholdRow struct {
	section    string
	expected   int
	interval   time.Duration // expectedClientRenewalInterval; 0 the default 30 s
	percent    float64       // renewalPercentThreshold; 0 the default 0.85
	want       int
	arithmetic string
}

// TestRenewalThresholdFormulaTable checks
// numberOfRenewsPerMinThreshold = (int)(expected x 60/interval x percent)
// (4.6), with the doc's examples and edge cases.
func TestRenewalThresholdFormulaTable(t *testing.T) {
	rows := []thresholdRow{
		{section: "4.6 (doc example)", expected: 1, want: 1, arithmetic: "(int)(1 x 2 x 0.85) = (int)1.7"},
		{section: "4.6 (doc example)", expected: 10, want: 17, arithmetic: "(int)(10 x 2 x 0.85) = (int)17.0"},
		{section: "4.6 (doc example)", expected: 100, want: 170, arithmetic: "(int)(100 x 2 x 0.85) = (int)170.0"},
		{section: "4.6 (expected 0)", expected: 0, want: 0, arithmetic: "(int)0"},
		{section: "4.6", expected: 2, want: 3, arithmetic: "(int)3.4"},
		{section: "4.6", expected: 13, want: 22, arithmetic: "(int)22.1"},
		{section: "4.6, interval 60 s", expected: 10, interval: time.Minute, want: 8, arithmetic: "(int)(10 x 1 x 0.85) = (int)8.5"},
		{section: "4.6, interval 10 s", expected: 10, interval: 10 * time.Second, want: 51, arithmetic: "(int)(10 x 6 x 0.85) = (int)51.0"},
		{section: "4.6 (an interval <= 0 falls back to 30 s)", expected: 10, interval: -time.Second, want: 17, arithmetic: "(int)(10 x 2 x 0.85)"},
		{section: "4.6, renewalPercentThreshold 0.5", expected: 10, percent: 0.5, want: 10, arithmetic: "(int)(10 x 2 x 0.5)"},
		{section: "4.6, renewalPercentThreshold 0.49", expected: 1, percent: 0.49, want: 0, arithmetic: "(int)0.98"},
	}
	for _, row := range rows {
		t.Run(fmt.Sprintf("expected %d interval %v percent %v", row.expected, row.interval, row.percent), func(t *testing.T) {
			interval, percent := row.interval, row.percent
			if interval <= 0 {
				interval = 30 * time.Second
			}
			if percent == 0 {
				percent = 0.85
			}
			checkDocArithmetic(t, row.section, row.expected, interval.Seconds(), percent, row.want)
			s, _ := newTestStore(t, Config{ExpectedClientRenewalInterval: row.interval, RenewalPercentThreshold: row.percent})
			s.SetExpectedRenewingClients(row.expected)
			expectCountAndThreshold(t, s, row.section, "", row.arithmetic, row.expected, row.want)
		})
	}
}

// expectedCountRow is a sequence of writes on a fresh Store and the
// expected number of renewing clients and threshold it leaves.
type expectedCountRow struct {
	section  string
	name     string
	start    int // set with SetExpectedRenewingClients; -1 leave the default
	news     int // registrations of new instances
	again    int // re-registrations of some of them
	cancels  int // cancels of some of them
	want     int
	wantThr  int
	thrArith string
}

// TestExpectedRenewingClientsTable checks how the expected count moves
// (4.6, 4.2 step 3, 4.4, 4.10): it starts at 1 as Spring's server does, each
// brand-new registration adds 1 and each cancel takes 1 away, but only while
// it is above 0; re-registrations do not count.
func TestExpectedRenewingClientsTable(t *testing.T) {
	rows := []expectedCountRow{
		{section: "4.10 / 4.13 (Spring starts at 1)", name: "fresh store", start: -1, want: 1, wantThr: 1, thrArith: "(int)1.7"},
		{section: "4.2 step 3", name: "10 new registrations", start: -1, news: 10, want: 11, wantThr: 18, thrArith: "(int)18.7"},
		{section: "4.2 step 3", name: "re-registrations are not new", start: -1, news: 10, again: 4, want: 11, wantThr: 18, thrArith: "(int)18.7"},
		{section: "4.4", name: "cancels lower it", start: -1, news: 10, cancels: 3, want: 8, wantThr: 13, thrArith: "(int)13.6"},
		{section: "4.2 step 3 (the > 0 guard)", name: "expected 0: registrations do not raise it", start: 0, news: 3, want: 0, wantThr: 0, thrArith: "(int)0"},
		{section: "4.4 (the > 0 guard)", name: "expected 0: cancels do not lower it", start: 0, news: 3, cancels: 2, want: 0, wantThr: 0, thrArith: "(int)0"},
		{section: "4.10 openForTraffic(count)", name: "set to 13", start: 13, want: 13, wantThr: 22, thrArith: "(int)22.1"},
		{section: "4.2 step 3 / 4.4", name: "set to 2, then one in and one out", start: 2, news: 1, cancels: 1, want: 2, wantThr: 3, thrArith: "(int)3.4"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			checkDocArithmetic(t, row.section, row.want, 30, 0.85, row.wantThr)
			s, _ := newTestStore(t, Config{})
			if row.start >= 0 {
				s.SetExpectedRenewingClients(row.start)
			}
			for n := range row.news {
				mustRegister(t, s, inst("A", fmt.Sprint(n)), false)
			}
			for n := range row.again {
				mustRegister(t, s, inst("A", fmt.Sprint(n)), false)
			}
			for n := range row.cancels {
				if !s.Cancel("A", fmt.Sprint(n), false) {
					t.Fatalf("setup: cancel of %d failed", n)
				}
			}
			expectCountAndThreshold(t, s, row.section, "", row.thrArith, row.want, row.wantThr)
		})
	}
}

// recountRow is the 15-minute recount on a registry of count instances
// whose expected count was set to expected.
type recountRow struct {
	section string
	count   int
	expect  int
	off     bool    // self-preservation disabled
	percent float64 // renewalPercentThreshold; 0 the default 0.85
	want    int     // expected count afterwards
	wantThr int
	why     string
}

// TestRenewalThresholdRecountTable checks the 15-minute recount (4.6): the
// registry's count is adopted only if count > percent x expected, or
// always with self-preservation off; then the threshold is recomputed.
func TestRenewalThresholdRecountTable(t *testing.T) {
	rows := []recountRow{
		{section: "4.6 recount (a large drop is not adopted)", count: 3, expect: 4, want: 4, wantThr: 6, why: "3 > 3.4 is false; (int)6.8"},
		{section: "4.6 recount (raised freely)", count: 7, expect: 5, want: 7, wantThr: 11, why: "7 > 4.25; (int)11.9"},
		{section: "4.6 recount (exactly 85 %: not adopted)", count: 17, expect: 20, want: 20, wantThr: 34, why: "17 > 17.0 is false; (int)34.0"},
		{section: "4.6 recount (a small drop is adopted)", count: 18, expect: 20, want: 18, wantThr: 30, why: "18 > 17.0; (int)30.6"},
		{section: "4.6 recount (from 0)", count: 5, expect: 0, want: 5, wantThr: 8, why: "5 > 0; (int)8.5"},
		{section: "4.6 recount (empty registry)", count: 0, expect: 1, want: 1, wantThr: 1, why: "0 > 0.85 is false; (int)1.7"},
		{section: "4.6 recount (empty, expected 0)", count: 0, expect: 0, want: 0, wantThr: 0, why: "0 > 0 is false"},
		{section: "4.6 recount, self-preservation off (always adopted)", off: true, count: 3, expect: 20, want: 3, wantThr: 5, why: "adopted; (int)5.1"},
		{section: "4.6 recount, self-preservation off (always adopted)", off: true, count: 0, expect: 5, want: 0, wantThr: 0, why: "adopted; (int)0"},
		{section: "4.6 recount, renewalPercentThreshold 0.5", percent: 0.5, count: 3, expect: 5, want: 3, wantThr: 3, why: "3 > 2.5; (int)(3 x 2 x 0.5)"},
	}
	for _, row := range rows {
		t.Run(fmt.Sprintf("count %d expected %d off %v percent %v", row.count, row.expect, row.off, row.percent), func(t *testing.T) {
			percent := row.percent
			if percent == 0 {
				percent = 0.85
			}
			checkDocArithmetic(t, row.section, row.want, 30, percent, row.wantThr)
			s, _ := newTestStore(t, Config{DisableSelfPreservation: row.off, RenewalPercentThreshold: row.percent})
			for n := range row.count {
				mustRegister(t, s, inst("A", fmt.Sprint(n)), false)
			}
			s.SetExpectedRenewingClients(row.expect)
			s.UpdateRenewalThreshold()
			expectCountAndThreshold(t, s, row.section, row.why, row.why, row.want, row.wantThr)
		})
	}
}

// gateRow is two instances registered at 0 ("dead", never renewed, and
// "x"), an expected count, renews of x at 60 s (a minute boundary) and a
// look at checkAt.
type gateRow struct {
	section  string
	name     string
	expected int
	off      bool // self-preservation disabled
	renews   int  // renews of x at 60 s
	repl     bool // the renews are replicated
	checkAt  time.Duration

	wantThreshold int
	wantLastMin   int64
	wantEvicting  bool // lease expiration enabled: evictions run
}

// TestSelfPreservationGateTable checks the self-preservation gate (4.6):
// lease expiration is enabled iff self-preservation is off or
// threshold > 0 && renewsLastMin > threshold, where renewsLastMin is the
// count of the previous full minute, replicated renews included (4.1).
// While it is disabled nothing is evicted, and expired leases stay visible
// to single-instance lookups.
func TestSelfPreservationGateTable(t *testing.T) {
	const at = 150 * time.Second // in the minute after the renews
	rows := []gateRow{
		{section: "4.6 gate", name: "renews at the threshold: preserved", expected: 10, renews: 17, checkAt: at, wantThreshold: 17, wantLastMin: 17},
		{section: "4.6 gate", name: "one renew above the threshold: evicting", expected: 10, renews: 18, checkAt: at, wantThreshold: 17, wantLastMin: 18, wantEvicting: true},
		{section: "4.6 gate (doc example: expected 1)", name: "expected 1, one renew: preserved", expected: 1, renews: 1, checkAt: at, wantThreshold: 1, wantLastMin: 1},
		{section: "4.6 gate (doc example: expected 1)", name: "expected 1, two renews: evicting", expected: 1, renews: 2, checkAt: at, wantThreshold: 1, wantLastMin: 2, wantEvicting: true},
		{section: "4.6 gate (threshold 0)", name: "expected 0: never evicting", expected: 0, renews: 5, checkAt: at, wantThreshold: 0, wantLastMin: 5},
		{section: "4.6 gate (self-preservation off)", name: "off, no renews: evicting", off: true, expected: 10, checkAt: at, wantThreshold: 17, wantEvicting: true},
		{section: "4.6 gate (self-preservation off)", name: "off, threshold 0: evicting", off: true, expected: 0, checkAt: at, wantThreshold: 0, wantEvicting: true},
		{section: "4.1 renewsLastMin (previous full minute)", name: "renews of the current minute do not count yet", expected: 1, renews: 5, checkAt: 119 * time.Second, wantThreshold: 1, wantLastMin: 0},
		{section: "4.1 renewsLastMin (not a sliding window)", name: "renews two minutes ago no longer count", expected: 1, renews: 5, checkAt: 181 * time.Second, wantThreshold: 1, wantLastMin: 0},
		{section: "4.1 renewsLastMin (replicated renews count)", name: "18 replicated renews: evicting", expected: 10, renews: 18, repl: true, checkAt: at, wantThreshold: 17, wantLastMin: 18, wantEvicting: true},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s, clock := newTestStore(t, Config{DisableSelfPreservation: row.off})
			start := clock.Now()
			if start.Truncate(time.Minute) != start {
				t.Fatal("setup: the fake clock does not start on a minute")
			}
			mustRegister(t, s, inst("A", "dead"), false)
			mustRegister(t, s, inst("A", "x"), false)
			s.SetExpectedRenewingClients(row.expected)
			clock.Advance(time.Minute)
			for range row.renews {
				if res, _ := s.Renew("A", "x", RenewRequest{Replication: row.repl}); res != RenewOK {
					t.Fatalf("setup: renew answered %d", renewCode(res))
				}
			}
			clock.Advance(start.Add(row.checkAt).Sub(clock.Now()))

			sp := s.Stats().SelfPreservation()
			expectRow(t, row.section, "enabled", sp.Enabled, !row.off)
			expectRow(t, row.section, "threshold", sp.Threshold, row.wantThreshold)
			expectRow(t, row.section, "renews last minute", sp.RenewsLastMinute, row.wantLastMin)
			expectRow(t, row.section, "self-preservation active", sp.Active, !row.wantEvicting)
			// "dead" has expired (checkAt > 90 s): single lookups hide it
			// only while lease expiration is enabled.
			_, visible := s.Get("A", "dead")
			expectRow(t, row.section, "expired lease visible to GET apps/{app}/{id}", visible, !row.wantEvicting)
			ev := s.Evict()
			expectRow(t, row.section, fmt.Sprintf("eviction ran (evicted %v)", ev), len(ev) > 0, row.wantEvicting)
		})
	}
}
