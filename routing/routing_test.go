package routing

import (
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
)

func TestRemoveDotSegments(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/orders/x", "/orders/x"},
		{"/ADMIN/../ECHO/x", "/ECHO/x"},
		{"/ECHO/x/../../ADMIN/y?a=/../b", "/ADMIN/y?a=/../b"},
		{"/a/./b", "/a/b"},
		{"/a/.", "/a/"},
		{"/a/..", "/"},
		{"/..", "/"},
		{"/../../x", "/x"},
		{"/ADMIN/%2e%2E/ECHO/x", "/ECHO/x"},
		{"/ADMIN/.%2e/ECHO/x", "/ECHO/x"},
		{"/a/.../b", "/a/.../b"},
		{"/a/..b/c", "/a/..b/c"},
		{"/a/%2e", "/a/"},
		{"*", "*"},
		{"", ""},
		{"/", "/"},
	} {
		if got := string(RemoveDotSegments(nil, c.in)); got != c.want {
			t.Errorf("RemoveDotSegments(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := string(RemoveDotSegments(nil, []byte(c.in))); got != c.want {
			t.Errorf("RemoveDotSegments([]byte %q) = %q, want %q", c.in, got, c.want)
		}
		if has := HasDotSegment(c.in); has != (c.in != c.want) && c.in != "/a/./b" {
			t.Errorf("HasDotSegment(%q) = %v", c.in, has)
		}
	}
	if !HasDotSegment("/a/./b") || HasDotSegment("/a?/../b") {
		t.Error("HasDotSegment")
	}
}

func TestSplitAppAndName(t *testing.T) {
	for _, c := range []struct{ in, name, rest string }{
		{"/orders/items/7?x=1", "orders", "/items/7?x=1"},
		{"/orders?x=1", "orders", "?x=1"},
		{"//orders", "orders", ""},
		{"/", "", ""},
		{"/?x", "", ""},
		{"orders/x", "", ""},
	} {
		name, rest, ok := SplitApp(c.in)
		if name != c.name || rest != c.rest || ok != (c.name != "") {
			t.Errorf("SplitApp(%q) = %q %q %v", c.in, name, rest, ok)
		}
	}
	for in, want := range map[string]string{
		"orders": "ORDERS", "Or-ders_1": "OR-DERS_1", "adm\xc4\xb1n": "ADM\xc4\xb1N", "\xc5\xbfink": "\xc5\xbfINK", "ADMIN": "ADMIN",
	} {
		if got := eureka.AppName([]byte(in)); got != want {
			t.Errorf("AppName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChecks(t *testing.T) {
	for target, bad := range map[string]bool{
		"/orders/x?y=%2F": false, "/orders/x#frag": true, "/orders/%zz": true, "/orders/%2": true, "/a%": true,
	} {
		if got := CheckTarget(target) != ""; got != bad {
			t.Errorf("CheckTarget(%q) refuses: %v", target, got)
		}
	}
	for host, bad := range map[string]bool{
		"": false, "example.com": false, "example.com:8080": false, "127.0.0.1:80": false, "[::1]:8080": false, "[::1]": false,
		"xn--bcher-kva.example": false, "a_b.local": false, "a%41": true,
		"evil.com/path": true, "a b": true, "<script>x</script>": true, "[::1": true, "a:1:2": true, "a:": false, "a:x": true, "a@b": true,
	} {
		if got := CheckHost(host) != ""; got != bad {
			t.Errorf("CheckHost(%q) refuses: %v", host, got)
		}
	}
	for raw, bad := range map[string]bool{
		"Host: a\r\nX: 1\r\n\r\n":               false,
		"Host: a\nX: 1\n\n":                     false,
		"Host: a\r\nX: 1\r\n two\r\n\r\n":       true,
		"Host: a\r\n\tX: 1\r\n\r\n":             true,
		"Host: a\r\nX Y: 1\r\n\r\n":             true,
		"Host: a\r\nX : 1\r\n\r\n":              true,
		"Host: a\r\nX_Forwarded_For: 1\r\n\r\n": false,
		"Host: a\r\nnocolon\r\n\r\n":            true,
		"Host: a\r\n: v\r\n\r\n":                true,
		"Host: a\r\nX\rY: 1\r\n\r\n":            true,
		"Host: a\r\nX\r\n\r\n":                  true,
		"Host: a\r\nX":                          true,
		"Host: a":                               false,
		"Host: a\r\n\r\nnot a field\r\n":        false,
		"Host: \xff\r\n\r\n":                    false,
		"H\xffst: a\r\n\r\n":                    true,
	} {
		if got := CheckFields(raw) != ""; got != bad {
			t.Errorf("CheckFields(%q) refuses: %v", raw, got)
		}
	}
	for proto, bad := range map[string]bool{"HTTP/1.1": false, "HTTP/1.0": false, "HTTP/2.0": true, "HTTP/9.9": true} {
		if got := CheckProtocol(proto) != ""; got != bad {
			t.Errorf("CheckProtocol(%q) refuses: %v", proto, got)
		}
	}
}

// The checks a request pays for on every path allocate nothing.
func TestNoAllocations(t *testing.T) {
	target := []byte("/orders/items/7?x=1")
	raw := []byte("Host: a\r\nAccept: */*\r\n\r\n")
	n := testing.AllocsPerRun(100, func() {
		_ = HasDotSegment(target)
		_, _, _ = SplitApp(target)
		_ = CheckTarget(target)
		_ = CheckHost(raw[6:7])
		_ = CheckFields(raw)
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// BenchmarkCheckFields is the field check of the gateway study's request
// (the five fields BenchmarkLoopsCode's request has, in gateway).
//
//	go test ./routing -run XXX -bench CheckFields -benchmem -cpu 1
func BenchmarkCheckFields(b *testing.B) {
	raw := []byte("Host: gateway\r\nUser-Agent: wrk\r\nX-Canary: 1\r\nX-User-Id: user-42\r\nCookie: session=abc\r\n\r\n")
	b.ReportAllocs()
	for range b.N {
		if r := CheckFields(raw); r != "" {
			b.Fatal(r)
		}
	}
}
