package eureka

import (
	"math"
	"strconv"
)

// Lenient scalars: both decoders read ints from numbers, numeric strings
// and element text with parseInt.

// parseInt reads an integer, or a float truncated to one. ok is false for
// anything else, floats beyond int64's range included.
func parseInt(s string) (v int64, ok bool) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, true
	}
	f, err := strconv.ParseFloat(s, 64)
	// The range test is false for NaN too, and rules out the infinities.
	return int64(f), err == nil && f >= math.MinInt64 && f <= math.MaxInt64
}

// quickInt parses the common case of parseInt without allocating: an
// optional sign and up to 18 digits, which cannot overflow. ok is false
// for anything else, to be left to parseInt.
func quickInt(b []byte) (v int64, ok bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// asciiEqualFold reports whether b is s (lower-case ASCII) in any case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for n, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[n] {
			return false
		}
	}
	return true
}
