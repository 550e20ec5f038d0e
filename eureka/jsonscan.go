package eureka

import (
	"encoding/binary"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonScanner reads a JSON document held in memory, one value at a time,
// with the rules of encoding/json's Unmarshal: the same grammar, the same
// nesting limit, strings unquoted the same way (invalid UTF-8 and lone
// surrogates become U+FFFD) and object keys matched to names the same way
// (exactly, else case-insensitively with Unicode folding). It validates
// every byte it passes, including the values it skips, so a document it
// accepts is one encoding/json accepts.
//
// The scanner was written by hand rather than built on a tokenizer such as
// go-json-experiment's jsontext: tokenizing a 10,000-instance registry
// with jsontext alone took about 1.4 times as long as encoding it, which
// leaves too little of the "decode at most twice encode" budget for
// building the result.
type jsonScanner struct {
	data  []byte
	pos   int
	depth int
	key   []byte // unquoted key, when it had escapes
}

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

// jsonPlain marks the bytes a string can hold that need no unquoting.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// ws skips white space and returns the next byte, or 0 at the end.
func (s *jsonScanner) ws() byte {
	if s.pos < len(s.data) && s.data[s.pos] > ' ' {
		return s.data[s.pos]
	}
	return s.wsSlow()
}

func (s *jsonScanner) wsSlow() byte {
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return c
		}
	}
	return 0
}

// atEnd reports whether only white space is left.
func (s *jsonScanner) atEnd() bool {
	s.ws()
	return s.pos == len(s.data)
}

// str reads the string at pos (which holds '"') and returns its raw
// content. plain reports that the content needs no unquoting: no escapes
// and valid UTF-8.
func (s *jsonScanner) str() (content []byte, plain, ok bool) {
	data := s.data
	i := s.pos + 1
	plain = true
	for {
		for i+8 <= len(data) && jsonSpecial(binary.LittleEndian.Uint64(data[i:])) == 0 {
			i += 8
		}
		for i < len(data) && jsonPlain[data[i]] {
			i++
		}
		if i >= len(data) {
			return nil, false, false
		}
		switch c := data[i]; {
		case c == '"':
			content = data[s.pos+1 : i]
			s.pos = i + 1
			return content, plain, true
		case c == '\\':
			plain = false
			if i+1 >= len(data) {
				return nil, false, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					return nil, false, false
				}
				for _, h := range data[i+2 : i+6] {
					if !isHex(h) {
						return nil, false, false
					}
				}
				i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				plain = false
			}
			i += size
		}
	}
}

// Eight bytes at a time: the high bit of each byte of the result is set
// for the bytes that are not plain ASCII string content (and possibly for
// bytes after one that is).
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

func hasZero(x uint64) uint64 { return (x - lsb) & ^x & msb }

func jsonSpecial(x uint64) uint64 {
	return (x-lsb*0x20)&^x&msb | hasZero(x^(lsb*'"')) | hasZero(x^(lsb*'\\')) | x&msb
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number reads the number at pos and returns its text.
func (s *jsonScanner) number() ([]byte, bool) {
	data, i := s.data, s.pos
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return nil, false
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		for i++; i < len(data) && '0' <= data[i] && data[i] <= '9'; i++ {
		}
	default:
		return nil, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		d := i
		for ; i < len(data) && '0' <= data[i] && data[i] <= '9'; i++ {
		}
		if i == d {
			return nil, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		d := i
		for ; i < len(data) && '0' <= data[i] && data[i] <= '9'; i++ {
		}
		if i == d {
			return nil, false
		}
	}
	text := data[s.pos:i]
	s.pos = i
	return text, true
}

// literal reads true, false or null at pos and returns its text.
func (s *jsonScanner) literal() ([]byte, bool) {
	rest := s.data[s.pos:]
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(rest) >= len(lit) && string(rest[:len(lit)]) == lit {
			s.pos += len(lit)
			return rest[:len(lit)], true
		}
	}
	return nil, false
}

// scalar reads the string, number or literal at pos (c is its first byte)
// and returns its raw text, quotes included for a string.
func (s *jsonScanner) scalar(c byte) ([]byte, bool) {
	switch {
	case c == '"':
		start := s.pos
		if _, _, ok := s.str(); !ok {
			return nil, false
		}
		return s.data[start:s.pos], true
	case c == 't' || c == 'f' || c == 'n':
		return s.literal()
	default:
		return s.number()
	}
}

// skip reads and discards the value at pos, validating it.
func (s *jsonScanner) skip() bool {
	switch c := s.ws(); c {
	case '{':
		if !s.enter() {
			return false
		}
		more, ok := s.first('}'), true
		for more {
			if s.ws() != '"' {
				return false
			}
			if _, _, ok := s.str(); !ok || !s.colon() || !s.skip() {
				return false
			}
			more, ok = s.next('}')
		}
		return ok
	case '[':
		if !s.enter() {
			return false
		}
		more, ok := s.first(']'), true
		for more {
			if !s.skip() {
				return false
			}
			more, ok = s.next(']')
		}
		return ok
	case 0:
		return false
	default:
		_, ok := s.scalar(c)
		return ok
	}
}

// enter consumes the '{' or '[' at pos.
func (s *jsonScanner) enter() bool {
	s.pos++
	s.depth++
	return s.depth <= maxJSONDepth
}

// first is called after enter: it reports whether the object or array has
// a first member, or consumes the closing byte.
func (s *jsonScanner) first(end byte) bool {
	if s.ws() == end {
		s.pos++
		s.depth--
		return false
	}
	return true
}

// next is called after a member: it consumes the ',' before the next one,
// or the closing byte.
func (s *jsonScanner) next(end byte) (more, ok bool) {
	switch s.ws() {
	case ',':
		s.pos++
		return true, true
	case end:
		s.pos++
		s.depth--
		return false, true
	}
	return false, false
}

// colon consumes the ':' after a key.
func (s *jsonScanner) colon() bool {
	if s.ws() != ':' {
		return false
	}
	s.pos++
	return true
}

// member reads the key of the next object member and the colon after it,
// leaving pos at the value. The key is unquoted; it is valid until the
// next call.
func (s *jsonScanner) member() ([]byte, bool) {
	if s.ws() != '"' {
		return nil, false
	}
	k, plain, ok := s.str()
	if !ok || !s.colon() {
		return nil, false
	}
	if !plain {
		s.key = appendUnquoted(s.key[:0], k)
		k = s.key
	}
	return k, true
}

// appendUnquoted appends the unquoted form of a string's raw content, which
// str has validated, as encoding/json unquotes it.
func appendUnquoted(b, s []byte) []byte {
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			r++
			switch s[r] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(s[r+1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					rr1 := rune(-1)
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						rr1 = hex4(s[r+2:])
					}
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, s[r])
			}
			r++
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return b
}

// hex4 reads four hex digits (validated by str), or returns -1 when they
// are not there.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// foldEqual reports whether key matches the ASCII name as encoding/json
// matches a key to a field name that is not an exact match: both folded
// rune by rune to the smallest rune of their Unicode fold set, so that
// "HOSTNAME" and "hoſtName" (long s) match "hostName".
func foldEqual(key []byte, name string) bool {
	// Each rune of key matches one byte of name and takes at least one
	// byte: a shorter key cannot match, and one of the same length only
	// byte for byte.
	if len(key) < len(name) {
		return false
	}
	if len(key) == len(name) {
		return asciiEqualFoldUpper(key, name)
	}
	n := 0
	for k := 0; k < len(key); n++ {
		if n >= len(name) {
			return false
		}
		want := name[n]
		if 'a' <= want && want <= 'z' {
			want -= 'a' - 'A'
		}
		c := key[k]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			if c != want {
				return false
			}
			k++
			continue
		}
		r, size := utf8.DecodeRune(key[k:])
		if foldRune(r) != rune(want) {
			return false
		}
		k += size
	}
	return n == len(name)
}

// foldRune returns the smallest rune of r's fold set, as encoding/json's.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// asciiEqualFoldUpper reports whether key and name are the same ASCII
// letters in any case, and the same other bytes.
func asciiEqualFoldUpper(key []byte, name string) bool {
	for n, c := range key {
		want := name[n]
		if c == want {
			continue
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if 'a' <= want && want <= 'z' {
			want -= 'a' - 'A'
		}
		if c != want {
			return false
		}
	}
	return true
}
