package eureka

import (
	"errors"
	"math"
	"strconv"
)

// Lenient scalars: both decoders read ints from numbers, numeric strings
// and element text with parseInt.

var errBadNumber = errors.New("eureka: not a number")

// parseInt reads an integer, or a float truncated to one.
func parseInt(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	fl, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(fl) || math.IsInf(fl, 0) || fl > math.MaxInt64 || fl < math.MinInt64 {
		return 0, errBadNumber
	}
	return int64(fl), nil
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
