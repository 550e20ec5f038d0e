package eureka

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// The byte source of xmlReader: it reads the XML that Eureka servers and
// clients write straight from the bytes: elements with ASCII names, quoted
// attributes, text with the predefined entities and character references.
// It checks what encoding/xml checks on that subset (matching end tags,
// valid characters, "]]>" outside CDATA, entities) and decodes text as it
// does (entities, "\r\n" and "\r" as "\n"). Whatever it does not handle,
// or finds wrong, makes it give up (return false); the decoder then reads
// the document again from encoding/xml's tokens, which have encoding/xml's
// answer, error or not.

// maxScanDepth bounds the nesting the scanner skips; deeper documents go
// to encoding/xml.
const maxScanDepth = 256

// xmlPlain marks the bytes text can hold as they are.
var xmlPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '<' && c != '&' && c != '>' && c != '"' && c != '\''
	}
	t['\t'], t['\n'] = true, true
	return t
}()

// xmlPlainText is xmlPlain for element text, where quotes are plain.
var xmlPlainText = func() (t [256]bool) {
	t = xmlPlain
	t['"'], t['\''] = true, true
	return t
}()

// xmlNameBytes classifies the bytes of ASCII names without colons: those
// that may start one, and those that may follow.
var xmlNameBytes = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_':
			t[c] = nameStart | nameByte
		case '0' <= c && c <= '9' || c == '.' || c == '-':
			t[c] = nameByte
		}
	}
	return t
}()

const (
	nameStart = 1 << iota
	nameByte
)

func isNameStart(c byte) bool { return xmlNameBytes[c]&nameStart != 0 }

// space skips XML white space and returns the next byte, or 0 at the end.
func (s *xmlReader) space() byte {
	var c byte
	s.pos, c = skipSpace(s.data, s.pos)
	return c
}

// readName reads an ASCII name without a colon.
func (s *xmlReader) readName() ([]byte, bool) {
	start := s.pos
	if start >= len(s.data) || !isNameStart(s.data[start]) {
		return nil, false
	}
	i := start + 1
	for i < len(s.data) && xmlNameBytes[s.data[i]]&nameByte != 0 {
		i++
	}
	if i >= len(s.data) || s.data[i] == ':' || s.data[i] >= utf8.RuneSelf {
		return nil, false
	}
	s.pos = i
	return s.data[start:i], true
}

// root reads up to and including the root element's start tag. The
// scanner allows only white space before it; encoding/xml skips whatever
// comes first, as Unmarshal does.
func (s *xmlReader) root() bool {
	if s.tokens != nil {
		return s.tokenRoot()
	}
	if s.space() != '<' {
		return false
	}
	s.pos++
	return s.startTag()
}

// startTag reads a start tag from its name on.
func (s *xmlReader) startTag() bool {
	name, ok := s.readName()
	return ok && s.attributes(name)
}

// atEndTag reports whether an end tag starts at pos.
func (s *xmlReader) atEndTag() bool {
	return s.pos+1 < len(s.data) && s.data[s.pos] == '<' && s.data[s.pos+1] == '/'
}

// plainTag reads the start tag at pos if it is tag ("<name") with no
// attributes.
func (s *xmlReader) plainTag(tag []byte) bool {
	end := s.pos + len(tag)
	if end >= len(s.data) || s.data[end] != '>' || string(s.data[s.pos:end]) != string(tag) {
		return false
	}
	s.pos = end + 1
	s.name, s.empty, s.hasEnabled, s.hasClass = tag[1:], false, false, false
	return true
}

// expected reads the start tag at pos, which starts with tag ("<name")
// and ends its name there (see fieldOrder.predict). It reports false,
// leaving pos as it was, if the tag is not well-formed.
func (s *xmlReader) expected(tag []byte) bool {
	start, end := s.pos, s.pos+len(tag)
	if s.data[end] == '>' {
		s.pos = end + 1
		s.name, s.empty, s.hasEnabled, s.hasClass = tag[1:], false, false, false
		return true
	}
	s.pos = end
	if s.attributes(tag[1:]) {
		return true
	}
	s.pos = start
	return false
}

// indentation skips the white space servers put between elements, the
// fast way to what next reads as text and drops.
func (s *xmlReader) indentation() {
	data, i := s.data, s.pos // locals: the loop runs in registers
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t') {
		i++
	}
	s.pos = i
}

// attributes reads the rest of the start tag of the element name.
func (s *xmlReader) attributes(name []byte) bool {
	s.name, s.empty, s.hasEnabled, s.hasClass = name, false, false, false
	for {
		switch s.space() {
		case '>':
			s.pos++
			return true
		case '/':
			if s.pos+1 < len(s.data) && s.data[s.pos+1] == '>' {
				s.pos += 2
				s.empty = true
				return true
			}
			return false
		}
		attr, ok := s.readName()
		if !ok || string(attr) == "xmlns" || s.space() != '=' {
			return false
		}
		s.pos++
		q := s.space()
		if q != '"' && q != '\'' {
			return false
		}
		s.pos++
		switch string(attr) {
		case "enabled":
			s.enabledBuf, ok = s.charData(s.enabledBuf[:0], q)
			s.enabled, s.hasEnabled = s.enabledBuf, true
		case "class":
			s.clsBuf, ok = s.charData(s.clsBuf[:0], q)
			s.class, s.hasClass = s.clsBuf, true
		default:
			s.discard, ok = s.charData(s.discard[:0], q)
		}
		if !ok {
			return false
		}
		s.pos++ // the closing quote
	}
}

// charData decodes character data up to the next '<' (quote 0) or up to the
// closing quote of an attribute value, leaving pos there, and appends it
// to b.
func (s *xmlReader) charData(b []byte, quote byte) ([]byte, bool) {
	data := s.data
	i := s.pos
	segment := i
	for {
		start := i
		if quote == 0 {
			for i+8 <= len(data) && xmlSpecial(binary.LittleEndian.Uint64(data[i:])) == 0 {
				i += 8
			}
			for i < len(data) && xmlPlainText[data[i]] {
				i++
			}
		} else {
			for i < len(data) && xmlPlain[data[i]] {
				i++
			}
		}
		b = append(b, data[start:i]...)
		if i >= len(data) {
			return b, false
		}
		switch c := data[i]; c {
		case '<':
			if quote != 0 {
				return b, false
			}
			s.pos = i
			return b, true
		case '"', '\'':
			if c == quote {
				s.pos = i
				return b, true
			}
			b = append(b, c)
			i++
		case '>':
			if quote == 0 && i-segment >= 2 && data[i-1] == ']' && data[i-2] == ']' {
				return b, false
			}
			b = append(b, c)
			i++
		case '&':
			r, n := entity(data[i:])
			if n == 0 {
				return b, false
			}
			b = utf8.AppendRune(b, r)
			i += n
		case '\r':
			b = append(b, '\n')
			i++
			if i < len(data) && data[i] == '\n' {
				i++
			}
		default:
			if c < utf8.RuneSelf {
				return b, false // a control character
			}
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 || !isXMLChar(r) {
				return b, false
			}
			b = append(b, data[i:i+size]...)
			i += size
		}
	}
}

// xmlSpecial is jsonSpecial for element text: the high bit of each byte of
// the result is set for the bytes that xmlPlainText does not mark, and for
// tabs and newlines (and possibly for bytes after one of those).
func xmlSpecial(x uint64) uint64 {
	return (x-lsb*0x20)&^x&msb | x&msb | hasZero(x^(lsb*'<')) | hasZero(x^(lsb*'&')) | hasZero(x^(lsb*'>'))
}

// entity decodes the entity or character reference at the start of b and
// returns the character and the length of the reference, or n 0.
func entity(b []byte) (r rune, n int) {
	end := bytes.IndexByte(b, ';')
	if end < 0 || end > 16 {
		return 0, 0
	}
	switch ref := string(b[1:end]); ref {
	case "lt":
		return '<', end + 1
	case "gt":
		return '>', end + 1
	case "amp":
		return '&', end + 1
	case "apos":
		return '\'', end + 1
	case "quot":
		return '"', end + 1
	default:
		if len(ref) < 2 || ref[0] != '#' {
			return 0, 0
		}
		base, digits := 10, ref[1:]
		if digits[0] == 'x' {
			base, digits = 16, digits[1:]
		}
		for n := 0; n < len(digits); n++ {
			if c := digits[n]; !('0' <= c && c <= '9' || base == 16 && isHex(c)) {
				return 0, 0
			}
		}
		v, err := strconv.ParseUint(digits, base, 64)
		if err != nil || v > unicode.MaxRune {
			return 0, 0
		}
		r = rune(v)
		if !utf8.ValidRune(r) {
			r = utf8.RuneError // as string(rune(v)) makes it
		}
		if !isXMLChar(r) {
			return 0, 0
		}
		return r, end + 1
	}
}

// isXMLChar is XML's Char production, as encoding/xml checks it.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// next reads the text of the element named name up to its next child,
// whose start tag it reads (more), or up to and including its end tag.
func (s *xmlReader) next(name []byte) (more, ok bool) {
	s.indentation()
	if s.pos >= len(s.data) || s.data[s.pos] != '<' {
		if s.discard, ok = s.charData(s.discard[:0], 0); !ok {
			return false, false
		}
	}
	if s.pos+1 >= len(s.data) {
		return false, false
	}
	switch c := s.data[s.pos+1]; {
	case c == '/':
		s.pos += 2
		return false, s.endTag(name)
	case isNameStart(c):
		s.pos++
		return true, s.startTag()
	}
	return false, false
}

// endTag reads the rest of </name>.
func (s *xmlReader) endTag(name []byte) bool {
	i := s.pos + len(name)
	if i >= len(s.data) || !bytes.Equal(s.data[s.pos:i], name) {
		return false
	}
	if s.data[i] == '>' {
		s.pos = i + 1
		return true
	}
	// Only white space may follow the name: a name byte, a colon or a
	// non-ASCII byte would make it another name.
	if c := s.data[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
		return false
	}
	s.pos = i
	if s.space() != '>' {
		return false
	}
	s.pos++
	return true
}

// leaf appends the text directly inside the element whose start tag was
// just read, up to its end. encoding/xml's tokens skip the elements inside
// it; the scanner gives up on them.
func (s *xmlReader) leaf(b []byte) ([]byte, bool) {
	if s.tokens != nil {
		return s.tokenLeaf(b)
	}
	if s.empty {
		return b, true
	}
	name := s.name
	b, ok := s.charData(b, 0)
	if !ok || s.pos+1 >= len(s.data) || s.data[s.pos+1] != '/' {
		return b, false
	}
	s.pos += 2
	return b, s.endTag(name)
}

// skip reads past the element whose start tag was just read.
func (s *xmlReader) skip() bool {
	if s.tokens != nil {
		return s.tokens.Skip() == nil
	}
	if s.empty {
		return true
	}
	if s.depth++; s.depth > maxScanDepth {
		return false
	}
	name := s.name
	for {
		more, ok := s.next(name)
		if !ok {
			return false
		}
		if !more {
			s.depth--
			return true
		}
		if !s.skip() {
			return false
		}
	}
}
