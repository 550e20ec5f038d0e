package caddymodule

import (
	"net/http"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/routing"
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

// prefixValue is routing.AppendPrefix's value, taken from the client's
// path without an allocation when that is where it is.
func TestPrefixValueIsAppendPrefixValue(t *testing.T) {
	for _, c := range []struct {
		target, prior string
		trusted       bool
		name          string
	}{
		{"/svc/x", "", false, "svc"},
		{"/svc", "/edge", false, "svc"},
		{"/svc/x", "/edge/", true, "svc"},
		{"/svc/x", "", true, "svc"},
		{"/a/../svc/x", "", false, "svc"},
		{"/Svc/x", "", false, "svc"},
		{"/sv", "", false, "svc"},
		{"/svc%2Fx", "", false, "svc%2Fx"},
	} {
		want := string(routing.AppendPrefix(nil, c.prior, c.trusted, c.name))
		if got := prefixValue(c.target, c.prior, c.trusted, []byte(c.name)); got != want {
			t.Errorf("%+v: %q, want %q", c, got, want)
		}
	}
	name := []byte("svc")
	if n := testing.AllocsPerRun(100, func() { stringSink = prefixValue("/svc/x", "/edge", false, name) }); n != 0 {
		t.Errorf("%v allocations for the client's own prefix", n)
	}
}

// stringSink keeps a string from the stack, as a header does.
var stringSink string

// tailOf is the path the instance gets, taken from the client's path
// without an allocation when that is where it is.
func TestTailOfIsThePath(t *testing.T) {
	for _, c := range []struct{ target, path string }{
		{"/svc/x", "/x"}, {"/svc/", "/"}, {"/svc", "/"}, {"/svc/a/../b", "/b"}, {"/x", "/svc/x"}, {"", "/"},
	} {
		if got := tailOf(c.target, []byte(c.path)); got != c.path {
			t.Errorf("tailOf(%q, %q) = %q", c.target, c.path, got)
		}
	}
	path := []byte("/items/7")
	if n := testing.AllocsPerRun(100, func() { stringSink = tailOf("/svc/items/7", path) }); n != 0 {
		t.Errorf("%v allocations for the client's own path", n)
	}
}

// The request id headerValues makes is held in its own bytes without an
// allocation, once: a second id is a string of its own, and leaves the
// first as it was.
func TestNewRequestIDKeepsItsBytes(t *testing.T) {
	fresh, k := make([]headerValues, 101), 0 // AllocsPerRun's runs and its warm-up
	if n := testing.AllocsPerRun(100, func() { stringSink = fresh[k].newRequestID(); k++ }); n != 0 {
		t.Errorf("%v allocations for the first id", n)
	}
	vals := new(headerValues)
	first := vals.newRequestID()
	kept := strings.Clone(first)
	second := vals.newRequestID()
	if first != kept || second == first || !routing.KeepRequestID(first, false) || !routing.KeepRequestID(second, false) {
		t.Errorf("first %q (was %q), second %q", first, kept, second)
	}
}

// The header fields the gateway sets, reads and deletes by their names
// as keys of the map (no canonicalization on the way) are in canonical
// form: a name that is not would be missed, and a client's claim kept.
func TestGatewayHeaderNamesAreCanonical(t *testing.T) {
	names := append(routing.ClientClaims[:], balancer.RouteHeader, routing.RegionHeader, routing.RequestIDHeader, forwardedPrefix, "Trailer")
	for _, n := range names {
		if c := http.CanonicalHeaderKey(n); c != n {
			t.Errorf("%q is %q in canonical form", n, c)
		}
	}
}
