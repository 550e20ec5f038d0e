package document

import (
	"strconv"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// foldInput is a change log for Fold: changes, oldest first, and their
// instances.
type foldInput struct {
	changes []Change
	insts   []eureka.InstanceInfo
}

// distinctChanges is n changes of n instances over apps applications.
func distinctChanges(n, apps int) foldInput {
	in := foldInput{changes: make([]Change, n), insts: make([]eureka.InstanceInfo, n)}
	for k := range n {
		i := fixture.SampleInstance(k)
		i.App = "APP-" + strconv.Itoa(k%apps)
		in.insts[k] = *i
		in.changes[k] = Change{Version: uint64(k + 1), App: i.App, ID: i.InstanceID}
	}
	return in
}

// fold folds in into d.
func (in foldInput) fold(d *Delta) {
	d.Fold(len(in.changes), func(k int) Change { return in.changes[k] }, 0,
		func(k int) eureka.InstanceInfo { return in.insts[k%len(in.insts)] },
		func(int) bool { return true })
}

// A fold holds the changes it takes in by their index, 8 bytes each: a
// fold of a million changes of one flapping instance (nothing to encode
// but the last) grew the heap by 150 to 220 MB while a copy of each
// Change (48 bytes with its index) was held, and grows it by about 105
// MB with the indices, most of it the map that keeps each instance's
// latest change (sized for every change taken in, as before).
func TestFoldHoldsEachChangeByItsIndex(t *testing.T) {
	const n = 1_000_000
	in := foldInput{changes: make([]Change, n), insts: []eureka.InstanceInfo{*fixture.SampleInstance(0)}}
	for k := range n {
		in.changes[k] = Change{Version: uint64(k + 1), App: in.insts[0].App, ID: in.insts[0].InstanceID}
	}
	d := NewDelta(eureka.FormatJSON, 0)
	growth := testkit.HeapGrowth(func() { in.fold(d) })
	// The map, the index slice with its last growth's copy and the
	// collector's slack (HeapGrowth runs it at 10%).
	if limit := uint64(128 * n); growth > limit {
		t.Errorf("a fold of %d changes grew the heap by %d bytes (%.1f a change), over %d", n, growth, float64(growth)/n, limit)
	}
	if d.UpTo() != n {
		t.Errorf("folded up to %d, want %d", d.UpTo(), n)
	}
	t.Logf("heap growth of a fold of %d changes: %.1f MB", n, float64(growth)/(1<<20))
}

// BenchmarkFold is the first fold after a mass registration of 100,000
// instances over 100 apps (every instance encoded, in batches), and a
// fold of a million changes of one instance (the bookkeeping alone).
func BenchmarkFold(b *testing.B) {
	distinct := distinctChanges(100_000, 100)
	one := foldInput{changes: make([]Change, 1_000_000), insts: distinct.insts[:1]}
	for k := range one.changes {
		one.changes[k] = Change{Version: uint64(k + 1), App: one.insts[0].App, ID: one.insts[0].InstanceID}
	}
	for _, run := range []struct {
		name string
		in   foldInput
	}{{"distinct-100k", distinct}, {"one-instance-1M", one}} {
		b.Run(run.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				run.in.fold(NewDelta(eureka.FormatJSON, 0))
			}
		})
	}
}
