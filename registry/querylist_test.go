package registry

import (
	"errors"
	"slices"
	"strings"
	"testing"

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
// comparisons of two names (n log n for the sort), not 64 times, as a
// search of the names so far made it. It counts the comparisons, not
// the time, so the machine's other work cannot decide it.
func TestInterestIsLinear(t *testing.T) {
	comparisons := func(list string) int {
		n := 0
		count := func(a, b string) int {
			n++
			return strings.Compare(a, b)
		}
		if _, err := parseListBy("apps", list, strings.ToUpper, func(string) bool { return true }, count); err != nil {
			t.Fatal(err)
		}
		return n
	}
	small, large := MaxQueryListNames/8, MaxQueryListNames
	cs, cl := comparisons(testkit.NameList("a", small)), comparisons(testkit.NameList("a", large))
	// n log n: 8 times the names, 8 * log(4096)/log(512) = 10.7 times the
	// comparisons; a search of the names so far, 64 times.
	if ratio := float64(cl) / float64(cs); cs == 0 || ratio > 16 {
		t.Errorf("%d names took %d comparisons, %d took %d: %.1f times the work for 8 times the names", small, cs, large, cl, ratio)
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
