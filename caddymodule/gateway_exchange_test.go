package caddymodule

import (
	"net/http"
	"testing"
)

// The fields headerValues sets share its array, but each is its own:
// adding a value to one leaves the next as it was, and fields past the
// array's size, or with no headerValues, get a slice of their own.
func TestHeaderValuesKeepEachFieldApart(t *testing.T) {
	h := http.Header{}
	var vals headerValues
	names := []string{"A", "B", "C", "D", "E"}
	for _, k := range names {
		vals.set(h, k, "v"+k)
	}
	(*headerValues)(nil).set(h, "F", "vF")
	for _, k := range names[:len(names)-1] {
		h.Add(k, "more")
	}
	for _, k := range append(names, "F") {
		want := []string{"v" + k, "more"}
		if k == "E" || k == "F" {
			want = want[:1]
		}
		if got := h.Values(k); len(got) != len(want) || got[0] != want[0] || len(got) == 2 && got[1] != want[1] {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}
