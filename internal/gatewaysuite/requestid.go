package gatewaysuite

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/registry"
)

// requestIDs: the instance gets exactly one X-Request-Id, the client's
// when it is of the safe form, else a new one.
func requestIDs(t *testing.T, start Starter) {
	base, store, _ := start(t)
	RequestIDs(t, base, store, false)
}

// RequestIDs checks the X-Request-Id an instance gets through the gateway
// at base over store, from a client that is a trusted proxy of the
// gateway's or not: one id always, a safe one kept, two reduced to the
// first when it is kept, and a hostile one (quotes, a backslash, \xff, a
// tab, 8 KB) kept only from a trusted proxy.
func RequestIDs(t *testing.T, base string, store *registry.Store, trusted bool) {
	a := newBackend(t, "a", nil)
	register(t, store, instance("ids", "a", a.port))
	host := strings.TrimPrefix(base, "http://")
	ids := func(t *testing.T, header string) []string {
		t.Helper()
		_, resp, body := sendRaw(t, host, "GET /ids/x HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n"+header+"\r\n")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %q", resp.StatusCode, body)
		}
		var s seen
		if err := json.Unmarshal([]byte(body), &s); err != nil {
			t.Fatalf("not the instance's answer: %v: %q", err, body)
		}
		return s.Header.Values("X-Request-Id")
	}
	const safe, other = "f47ac10b-58cc-4372-a567-0e02b2c3d479", "Zm9vYmFyYmF6cXV4cXV1eA=="
	for _, c := range []struct{ name, header, want string }{
		{"safe", "X-Request-Id: " + safe + "\r\n", safe},
		{"two", "X-Request-Id: " + safe + "\r\nx-request-id: " + other + "\r\n", safe},
		{"none", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ids(t, c.header)
			if c.want == "" {
				if len(got) != 1 || !requestID.MatchString(got[0]) {
					t.Errorf("X-Request-Id %q, want one new id", got)
				}
				return
			}
			expect(t, "X-Request-Id", got, []string{c.want})
		})
	}
	for _, c := range []struct{ name, id string }{
		{"quotes", `abcdefghij"klmnop"qrstuvwxyz`},
		{"backslash", `abcdefghij\klmnopqrstuvwxyz`},
		{"xff", "abcdefghij\xffklmnopqrstuvwxyz"},
		{"tab", "abcdefghij\tklmnopqrstuvwxyz"},
		{"8KB", strings.Repeat("a", 7900)}, // within the gateways' 8 KiB header bound
		{"short", "abc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, header := range []string{
				"X-Request-Id: " + c.id + "\r\n",
				"X-Request-Id: " + c.id + "\r\nX-Request-Id: " + safe + "\r\n",
			} {
				got := ids(t, header)
				switch {
				case len(got) != 1:
					t.Errorf("%d X-Request-Id headers reached the instance: %.80q", len(got), got)
				case trusted && strings.ToValidUTF8(c.id, "\ufffd") != got[0]:
					t.Errorf("a trusted proxy's X-Request-Id %.40q became %.40q", c.id, got[0])
				case !trusted && !requestID.MatchString(got[0]):
					t.Errorf("X-Request-Id %.40q reached the instance as %.40q, want a new id", c.id, got[0])
				}
			}
		})
	}
}
