package caddymodule

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/routing"
)

// The fields headerValues sets share its array, but each is its own:
// adding a value to one leaves the next as it was, and fields past the
// array's size, or with no headerValues, get a slice of their own.
func TestHeaderValuesKeepEachFieldApart(t *testing.T) {
	h := http.Header{}
	var vals headerValues
	var names []string // one more than the array holds: the last has a slice of its own
	for k := range len(vals.v) + 1 {
		names = append(names, string(rune('A'+k)))
	}
	for _, k := range names {
		vals.set(h, k, "v"+k)
	}
	vals.addTo(h)
	(*headerValues)(nil).set(h, "Z", "vZ")
	last := names[len(names)-1]
	for _, k := range names[:len(names)-1] {
		h.Add(k, "more")
	}
	for _, k := range append(names, "Z") {
		want := []string{"v" + k, "more"}
		if k == last || k == "Z" {
			want = want[:1]
		}
		if got := h.Values(k); len(got) != len(want) || got[0] != want[0] || len(got) == 2 && got[1] != want[1] {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}

// A field the client did not send waits in headerValues (pending), and
// addTo adds it to a copy of the header; one the client sent is replaced
// in the header at once; and the lean client writes the pending fields
// with the header's, in net/http's order.
func TestHeaderValuesPending(t *testing.T) {
	h := http.Header{"X-Request-Id": {"client"}, "Accept": {"*/*"}}
	var vals headerValues
	vals.set(h, "X-Request-Id", "id-1")
	vals.set(h, "Via", "1.1 Caddy")
	vals.set(h, "X-Forwarded-Proto", "https")
	vals.set(h, "X-Forwarded-Host", "gw")
	if got := h["X-Request-Id"]; len(got) != 1 || got[0] != "id-1" {
		t.Errorf("the client's field: %q", got)
	}
	if len(h) != 2 {
		t.Errorf("the header has the pending fields: %v", h)
	}
	if vv, ok := vals.field(h, "Via"); !ok || vv[0] != "1.1 Caddy" {
		t.Errorf("Via pending: %q %v", vv, ok)
	}

	var out bytes.Buffer
	c := newLeanConn(takingConn{}, "127.0.0.1:8080", time.Minute)
	c.bw.Reset(&out)
	r := httptest.NewRequest("GET", "http://gw/x", nil)
	r.Header = h
	if _, err := c.writeRequest(r, &vals); err != nil {
		t.Fatal(err)
	}
	want := "GET /x HTTP/1.1\r\nHost: gw\r\nUser-Agent: Go-http-client/1.1\r\nAccept: */*\r\nVia: 1.1 Caddy\r\n" +
		"X-Forwarded-Host: gw\r\nX-Forwarded-Proto: https\r\nX-Request-Id: id-1\r\nAccept-Encoding: gzip\r\n\r\n"
	if out.String() != want {
		t.Errorf("the lean client wrote\n%q, want\n%q", out.String(), want)
	}

	cp := h.Clone()
	vals.addTo(cp)
	if len(cp) != 5 || cp.Get("Via") != "1.1 Caddy" || len(cp["X-Forwarded-Proto"]) != 1 || cp.Get("X-Forwarded-Proto") != "https" || cp.Get("X-Forwarded-Host") != "gw" {
		t.Errorf("added: %v", cp)
	}
	if len(h) != 2 || vals.pending("Via") == nil {
		t.Errorf("the header or the pending fields changed with a copy's: %v, Via %q", h, vals.pending("Via"))
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
