package filewatch

import "testing"

// A change is held once it is seen twice in a row; another change in
// between starts over; an empty change is a change too (a truncated
// file is held, not applied at once); Reset forgets it.
func TestHoldStill(t *testing.T) {
	h := HoldStill[string]{Same: func(a, b string) bool { return a == b }}
	steps := []struct {
		seen string
		want bool
	}{{"a", false}, {"b", false}, {"b", true}, {"b", false}, {"", false}, {"", true}}
	for i, s := range steps {
		if got := h.Held(s.seen); got != s.want {
			t.Errorf("step %d: Held(%q) = %v, want %v", i, s.seen, got, s.want)
		}
	}
	h.Held("c")
	h.Reset()
	if h.Held("c") {
		t.Error("a change seen before Reset was held")
	}
}
