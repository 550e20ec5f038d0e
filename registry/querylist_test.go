package registry

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

func TestInterest(t *testing.T) {
	got, err := Interest(" b, A ,,a, c,B")
	if want := []string{"A", "B", "C"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Interest = %v, %v; want %v", got, err, want)
	}
	if got, err := Interest(testkit.NameList("a", MaxQueryListNames)); err != nil || len(got) != MaxQueryListNames {
		t.Errorf("Interest of %d names: %d names, %v", MaxQueryListNames, len(got), err)
	}
	for _, c := range []struct {
		list, want string
	}{
		{testkit.NameList("a", MaxQueryListNames+1), "apps: more than 4096 names; a list may hold at most 4096"},
		{strings.Repeat(",", MaxQueryListNames), "apps: more than 4096 names"},
		{strings.Repeat("A", MaxQueryListBytes+1), "apps: 32769 bytes; a list may be at most 32768 bytes"},
	} {
		_, err := Interest(c.list)
		var long *ListTooLongError
		if !errors.As(err, &long) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Interest of %d bytes: %v, want a ListTooLongError with %q", len(c.list), err, c.want)
		}
	}
}

// TestInterestIsLinear: eight times the names cost about eight times the
// time (n log n for the sort), not 64 times, as a search of the names so
// far made it. The fastest of several runs of each is compared, so that
// the machine's other work does not decide it.
func TestInterestIsLinear(t *testing.T) {
	fastest := func(list string) time.Duration {
		best := time.Duration(1 << 62)
		for range 7 {
			start := time.Now()
			for range 5 {
				Interest(list)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	small, large := testkit.NameList("a", MaxQueryListNames/8), testkit.NameList("a", MaxQueryListNames)
	fastest(large) // warm up
	ds, dl := fastest(small), fastest(large)
	if ratio := float64(dl) / float64(ds); ratio > 24 {
		t.Errorf("%d names took %v, %d took %v: %.0f times the time for 8 times the names", MaxQueryListNames/8, ds, MaxQueryListNames, dl, ratio)
	}
}

// A list past the bounds is refused before a name is read: 100,000
// names cost one allocation, the refusal.
func TestInterestRefusesBeforeParsing(t *testing.T) {
	list := testkit.NameList("a", 100_000)
	if n := testing.AllocsPerRun(20, func() { Interest(list) }); n > 1 {
		t.Errorf("Interest of 100,000 names: %v allocations, want the refusal's one", n)
	}
}

func BenchmarkInterest(b *testing.B) {
	list := testkit.NameList("a", MaxQueryListNames)
	b.ReportAllocs()
	for b.Loop() {
		Interest(list)
	}
}
