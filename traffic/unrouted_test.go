package traffic

import (
	"strconv"
	"strings"
	"testing"
)

// The names nobody registered are counted apart, the most asked kept: a
// client asking for thousands of made-up names keeps no more than
// UnroutedNames of them, and does not push out a name asked often; a
// long name is cut; counting a name already counted allocates nothing.
func TestUnroutedNamesBounded(t *testing.T) {
	r := New()
	for range 100 {
		r.Unrouted("ORDRS")
	}
	for range 20 {
		r.Unrouted("INVENTRY")
	}
	for n := range 10_000 {
		r.Unrouted("MADE-UP-" + strconv.Itoa(n))
	}
	r.Unrouted(strings.Repeat("X", 1000))
	if n := len(r.unrouted.counts); n != UnroutedNames {
		t.Errorf("%d names kept, want %d", n, UnroutedNames)
	}
	top := r.UnroutedTop(10)
	if len(top) != 10 || top[0] != (NameCount{"ORDRS", 100}) || top[1] != (NameCount{"INVENTRY", 20}) {
		t.Errorf("the most asked: %+v", top[:2])
	}
	for _, nc := range r.UnroutedTop(UnroutedNames) {
		if len(nc.Name) > MaxUnroutedName {
			t.Errorf("a name of %d bytes kept", len(nc.Name))
		}
	}
	if a := testing.AllocsPerRun(100, func() { r.Unrouted("ORDRS") }); a != 0 {
		t.Errorf("%v allocations counting a name already counted", a)
	}
	var nilRec *Recorder
	nilRec.Unrouted("ORDRS") // a gateway without counters
}
