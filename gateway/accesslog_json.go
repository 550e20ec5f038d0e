package gateway

import (
	"encoding/binary"
	"unicode/utf8"
)

// appendJSONString appends s as a JSON string, as zap writes it: '"',
// '\\' and control characters escaped, invalid UTF-8 as U+FFFD.
func appendJSONString[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if jsonPlain[s[i]] {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		b, i = appendEscaped(b, s, i)
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

// appendJSONBytes is appendJSONString for a request's bytes, the longer
// strings of a line, eight bytes at a time while they need no escape.
func appendJSONBytes(b, s []byte) []byte {
	b = append(b, '"')
	start, i := 0, 0
	for {
		for i+8 <= len(s) && plain8(binary.LittleEndian.Uint64(s[i:])) {
			i += 8
		}
		for i < len(s) && jsonPlain[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		b = append(b, s[start:i]...)
		b, i = appendEscaped(b, s, i)
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

// plain8 reports whether the eight bytes of x are all jsonPlain: none
// has its high bit set, none is below 0x20, none is '"' or '\\'.
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return x&highs == 0 && (x-ones*0x20)&^x&highs == 0 && zero(x^(ones*'"')) == 0 && zero(x^(ones*'\\')) == 0
}

// appendEscaped appends the character at s[i], which is not jsonPlain,
// as a JSON string holds it, and returns the index after it.
func appendEscaped[S ~string | ~[]byte](b []byte, s S, i int) ([]byte, int) {
	switch c := s[i]; {
	case c >= utf8.RuneSelf:
		var buf [utf8.UTFMax]byte
		n := copy(buf[:], s[i:])
		r, size := utf8.DecodeRune(buf[:n])
		if r == utf8.RuneError && size == 1 {
			return append(b, "\ufffd"...), i + 1
		}
		return append(b, s[i:i+size]...), i + size
	case c == '"' || c == '\\':
		b = append(b, '\\', c)
	case c == '\n':
		b = append(b, '\\', 'n')
	case c == '\r':
		b = append(b, '\\', 'r')
	case c == '\t':
		b = append(b, '\\', 't')
	default:
		b = append(b, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xF])
	}
	return b, i + 1
}

// jsonPlain are the bytes that a JSON string holds as they are: ASCII
// but control characters, '"' and '\\'.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendSeconds appends ns nanoseconds as seconds, a decimal number
// (1.5, 0.000412), as Caddy writes times and durations but exact.
//
// It writes the digits two at a time from the right, the point among
// them, where two strconv calls took twice as long: a line has two such
// numbers (its time and its duration).
func appendSeconds(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = -u
	}
	var t [32]byte // up to 11 digits of seconds, the point and 9 of a fraction
	i, end := len(t), len(t)
	if frac := u % 1e9; frac != 0 {
		for range 4 {
			q := frac / 100
			i -= 2
			copy(t[i:], digitPairs[2*(frac-q*100):][:2])
			frac = q
		}
		i--
		t[i] = byte('0' + frac)
		i--
		t[i] = '.'
		for t[end-1] == '0' {
			end--
		}
	}
	sec := u / 1e9
	for sec >= 100 {
		q := sec / 100
		i -= 2
		copy(t[i:], digitPairs[2*(sec-q*100):][:2])
		sec = q
	}
	if sec >= 10 {
		i -= 2
		copy(t[i:], digitPairs[2*sec:][:2])
	} else {
		i--
		t[i] = byte('0' + sec)
	}
	return append(b, t[i:end]...)
}

// digitPairs are 00 to 99, two bytes each.
const digitPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" + "30313233343536373839" +
	"40414243444546474849" + "50515253545556575859" + "60616263646566676869" + "70717273747576777879" +
	"80818283848586878889" + "90919293949596979899"

const hexDigit = "0123456789abcdef"
