package gateway

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Lines are JSON whatever the request carries: quotes, backslashes,
// control characters, invalid UTF-8 (each byte of it U+FFFD, as zap
// writes it), eight bytes at a time or not.
func TestAccessLogJSONStrings(t *testing.T) {
	cases := []string{"", "plain", `a"b\c`, "tab\tnl\nnul\x00\x1f", "é ü 日本", "bad \xff\xfe utf-8 \xe6\x97", "</script>&",
		"/orders/items/12345?expand=lines&page=2", `0123456"89abcdef\`, "01234567\x7f89abcdef\x80"}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab/?=&\"\\\x00\x1f\x7f\x80\xc3\xa9\xe6\x97\xa5\xff")
	for range 5000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = byte('a' + rng.IntN(26))
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		b := appendJSONString([]byte("x"), s)
		var got string
		if err := json.Unmarshal(b[1:], &got); err != nil {
			t.Errorf("%q: %s is not JSON: %v", s, b[1:], err)
			continue
		}
		var want strings.Builder
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			want.WriteRune(r)
			i += size
		}
		if got != want.String() {
			t.Errorf("%q: read back %q, want %q", s, got, want.String())
		}
		if bs := appendJSONBytes(nil, []byte(s)); string(bs) != string(b[1:]) {
			t.Errorf("%q: %s eight bytes at a time, %s one at a time", s, bs, b[1:])
		}
	}
}

func TestAppendSeconds(t *testing.T) {
	for ns, want := range map[int64]string{0: "0", 1: "0.000000001", 412000: "0.000412", 1.5e9: "1.5", 2e9: "2",
		1796181460263819700: "1796181460.2638197", -5e8: "-0.5"} {
		if got := string(appendSeconds(nil, ns)); got != want {
			t.Errorf("%d ns: %s, want %s", ns, got, want)
		}
	}
	// Every count of digits of the seconds (up to 9: 10 overflow int64
	// nanoseconds) and of the fraction, against the seconds and the
	// nanoseconds printed apart.
	for sec := int64(0); sec < 1e9; sec = sec*10 + 9 {
		for _, frac := range []int64{0, 5, 10, 99, 100, 120000, 999999999, 100000000, 123456789} {
			want := strconv.FormatInt(sec, 10)
			if frac != 0 {
				want += strings.TrimRight(fmt.Sprintf(".%09d", frac), "0")
			}
			if got := string(appendSeconds([]byte("x"), sec*1e9+frac)); got != "x"+want {
				t.Errorf("%d s %d ns: %s, want x%s", sec, frac, got, want)
			}
		}
	}
}
