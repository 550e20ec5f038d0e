package routing

import (
	"strings"
	"testing"
)

func TestKeepRequestID(t *testing.T) {
	for _, c := range []struct {
		v                string
		trusted, untrust bool
	}{
		{"0123456789abcdef0123456789abcdef", true, true},
		{"f47ac10b-58cc-4372-a567-0e02b2c3d479", true, true},
		{"Zm9vYmFyYmF6cXV4+/==", true, true},
		{strings.Repeat("a", MaxRequestIDLen), true, true},
		{strings.Repeat("a", MinRequestIDLen-1), true, false},
		{strings.Repeat("a", MaxRequestIDLen+1), true, false},
		{strings.Repeat("a", 8192), true, false},
		{`abcdefghij"klmnopqrstu`, true, false},
		{`abcdefghij\klmnopqrstu`, true, false},
		{"abcdefghij\tklmnopqrstu", true, false},
		{"abcdefghij\xffklmnopqrstu", true, false},
		{"abcdefghij klmnopqrstu", true, false},
		{"abcdefghij_klmnopqrstu", true, false},
		{"", false, false},
	} {
		if got := KeepRequestID(c.v, true); got != c.trusted {
			t.Errorf("KeepRequestID(%.40q, trusted) = %v, want %v", c.v, got, c.trusted)
		}
		if got := KeepRequestID([]byte(c.v), false); got != c.untrust {
			t.Errorf("KeepRequestID(%.40q, untrusted) = %v, want %v", c.v, got, c.untrust)
		}
	}
}
