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
// (exactly, else case-insensitively with Unicode folding; see
// fieldTable.fieldFold). It validates
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
	var c byte
	s.pos, c = skipSpace(s.data, s.pos)
	return c
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

// jsonSpecial finds the end of a string's plain run (see lsb).
func jsonSpecial(x uint64) uint64 {
	return (x-lsb*0x20)&^x&msb | hasZero(x^(lsb*'"')) | hasZero(x^(lsb*'\\')) | x&msb
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

// null reads the literal null (pos at 'n').
func (s *jsonScanner) null() bool {
	b, ok := s.literal()
	return ok && b[0] == 'n'
}

// skip reads and discards the value at pos, validating it.
func (s *jsonScanner) skip() bool {
	switch c := s.ws(); c {
	case '{':
		var o jsonObject
		for ok := true; s.member(&o, ok); {
			ok = s.skip()
		}
		return !o.failed
	case '[':
		var a jsonArray
		for ok := true; s.item(&a, ok); {
			ok = s.skip()
		}
		return !a.failed
	case 0:
		return false
	default:
		_, ok := s.scalar(c)
		return ok
	}
}

// jsonObject is a walk over the members of the object at pos, the one
// loop over an object that every reader in this package runs:
//
//	o := jsonObject{fields: leaseTable} // or jsonObject{}
//	for ok := true; d.member(&o, ok); {
//		ok = ... // read the value of o.field (or of o.key)
//	}
//	if o.failed { ... }
type jsonObject struct {
	// fields, if set, are the fields the keys name: member looks the key
	// up, after trying the keys that come next in the order servers write
	// (fieldOrder.predict), and skips the members of other keys.
	fields *fieldTable
	expect int // the position in that order

	field  int    // the field of the member at hand, or -1
	key    []byte // its key, unquoted; unset when the key was predicted
	open   bool
	failed bool // the input is not an object, or is malformed
}

// member moves to the next member of the object and reads its key, leaving
// pos at the value; ok says whether the caller could read the value of the
// member before. It reports false after the last member and on an error,
// which sets o.failed. The key is valid until the next read.
func (s *jsonScanner) member(o *jsonObject, ok bool) bool {
	if !ok {
		o.failed = true
		return false
	}
	for {
		if !o.open {
			o.open = true
			if s.ws() != '{' || !s.enter() {
				o.failed = true
				return false
			}
			if !s.first('}') {
				return false
			}
		} else if s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++ // what servers write, read without a call
		} else if more, ok := s.next('}'); !more {
			o.failed = !ok
			return false
		}
		t := o.fields
		if t != nil && len(t.json.steps) > 0 {
			// The key that comes next in the order is tried here rather
			// than in predict: it is the one nearly always, and a call
			// costs.
			rest, p := s.data[s.pos:], o.expect
			if !startsWith(rest, t.json.steps[p].expect) {
				p = t.json.predict(rest, p+1, false)
			}
			if p >= 0 {
				step := &t.json.steps[p]
				s.pos += len(step.expect)
				o.field, o.expect = step.field, step.next
				return true
			}
		}
		key, ok := s.readKey()
		if !ok {
			o.failed = true
			return false
		}
		o.key, o.field = key, -1
		if t == nil {
			return true
		}
		if o.field = t.fieldFold(key); o.field >= 0 {
			o.expect = t.json.next[o.field]
			return true
		}
		if !s.skip() {
			o.failed = true
			return false
		}
	}
}

// jsonArray is a walk over the elements of the array at pos:
//
//	var a jsonArray
//	for ok := true; s.item(&a, ok); {
//		ok = ... // read the element
//	}
//	if a.failed { ... }
type jsonArray struct{ open, failed bool }

// item moves to the next element of the array, leaving pos at it; ok says
// whether the caller could read the element before. It reports false after
// the last element and on an error, which sets a.failed.
func (s *jsonScanner) item(a *jsonArray, ok bool) bool {
	switch {
	case !ok:
		a.failed = true
		return false
	case !a.open:
		a.open = true
		if s.ws() != '[' || !s.enter() {
			a.failed = true
			return false
		}
		return s.first(']')
	}
	more, ok := s.next(']')
	a.failed = !ok
	return more
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

// readKey reads an object member's key and the colon after it, leaving pos
// at the value. The key is unquoted; it is valid until the next call.
func (s *jsonScanner) readKey() ([]byte, bool) {
	if s.ws() != '"' {
		return nil, false
	}
	k, plain, ok := s.str()
	if !ok {
		return nil, false
	}
	if s.ws() != ':' {
		return nil, false
	}
	s.pos++
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
