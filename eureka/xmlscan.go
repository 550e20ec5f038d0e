package eureka

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// xmlScanner reads the XML that Eureka servers and clients write straight
// from the bytes: elements with ASCII names, quoted attributes, text with
// the predefined entities and character references. It checks what
// encoding/xml checks on that subset (matching end tags, valid characters,
// "]]>" outside CDATA, entities) and decodes text as it does (entities,
// "\r\n" and "\r" as "\n"). Whatever it does not handle, or finds wrong,
// makes it give up (return false); the caller then reads the document
// with xmlTokens, which has encoding/xml's answer, error or not.
type xmlScanner struct {
	data  []byte
	pos   int
	d     *xmlDecoder
	depth int

	// The start tag just read: its name, whether it was <name/>, and the
	// last "enabled" and "class" attributes.
	name               []byte
	empty              bool
	hasEnabled         bool
	hasClass           bool
	enabled, class     []byte
	enabledBuf, clsBuf []byte
	discard            []byte
}

// maxScanDepth bounds the nesting the scanner skips; deeper documents go
// to xmlTokens.
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
func (s *xmlScanner) space() byte {
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

// readName reads an ASCII name without a colon.
func (s *xmlScanner) readName() ([]byte, bool) {
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

// root reads up to and including the root element's start tag. Only
// white space may come before it.
func (s *xmlScanner) root() bool {
	if s.space() != '<' {
		return false
	}
	s.pos++
	return s.startTag()
}

// startTag reads a start tag from its name on.
func (s *xmlScanner) startTag() bool {
	name, ok := s.readName()
	if !ok {
		return false
	}
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
			s.enabledBuf, ok = s.text(s.enabledBuf[:0], q)
			s.enabled, s.hasEnabled = s.enabledBuf, true
		case "class":
			s.clsBuf, ok = s.text(s.clsBuf[:0], q)
			s.class, s.hasClass = s.clsBuf, true
		default:
			s.discard, ok = s.text(s.discard[:0], q)
		}
		if !ok {
			return false
		}
		s.pos++ // the closing quote
	}
}

// text decodes character data up to the next '<' (quote 0) or up to the
// closing quote of an attribute value, leaving pos there, and appends it
// to b.
func (s *xmlScanner) text(b []byte, quote byte) ([]byte, bool) {
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
func (s *xmlScanner) next(name []byte) (more, ok bool) {
	more, _, ok = s.nextOrTag(name, nil)
	return more, ok
}

// nextOrTag is next, but tries first whether the next child is tag, a
// start tag such as "<hostName>" (predicted).
func (s *xmlScanner) nextOrTag(name, tag []byte) (more, predicted, ok bool) {
	// Mostly there is only indentation to skip.
	i := s.pos
	for i < len(s.data) && (s.data[i] == ' ' || s.data[i] == '\n' || s.data[i] == '\t') {
		i++
	}
	s.pos = i
	if tag != nil && bytes.HasPrefix(s.data[i:], tag) {
		s.pos += len(tag)
		s.name, s.empty, s.hasEnabled, s.hasClass = tag[1:len(tag)-1], false, false, false
		return true, true, true
	}
	if i >= len(s.data) || s.data[i] != '<' {
		if s.discard, ok = s.text(s.discard[:0], 0); !ok {
			return false, false, false
		}
	}
	if s.pos+1 >= len(s.data) {
		return false, false, false
	}
	switch c := s.data[s.pos+1]; {
	case c == '/':
		s.pos += 2
		return false, false, s.endTag(name)
	case isNameStart(c):
		s.pos++
		return true, false, s.startTag()
	}
	return false, false, false
}

// endTag reads the rest of </name>.
func (s *xmlScanner) endTag(name []byte) bool {
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

// leaf reads the text of the element whose start tag was just read, up to
// its end tag, and appends it to b. An element inside it is left to
// xmlTokens.
func (s *xmlScanner) leaf(b []byte) ([]byte, bool) {
	if s.empty {
		return b, true
	}
	name := s.name
	b, ok := s.text(b, 0)
	if !ok || s.pos+1 >= len(s.data) || s.data[s.pos+1] != '/' {
		return b, false
	}
	s.pos += 2
	return b, s.endTag(name)
}

// skip reads past the element whose start tag was just read.
func (s *xmlScanner) skip() bool {
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

// children calls child for each child element of the element whose start
// tag was just read; child must read past it.
func (s *xmlScanner) children(child func() bool) bool {
	if s.empty {
		return true
	}
	name := s.name
	for {
		more, ok := s.next(name)
		if !ok {
			return false
		}
		if !more {
			return true
		}
		if !child() {
			return false
		}
	}
}

func (s *xmlScanner) applications(w *xmlApplications) bool {
	d := s.d
	return s.children(func() bool {
		var ok bool
		switch string(s.name) {
		case "versions__delta":
			d.tmp, ok = s.leaf(d.tmp[:0])
			w.version = string(d.tmp)
		case "apps__hashcode":
			d.tmp, ok = s.leaf(d.tmp[:0])
			w.hashcode = string(d.tmp)
		case "application":
			var a xmlApplication
			ok = s.application(&a)
			a.resultInto(w)
		default:
			ok = s.skip()
		}
		return ok
	})
}

func (s *xmlScanner) application(w *xmlApplication) bool {
	d := s.d
	return s.children(func() bool {
		var ok bool
		switch string(s.name) {
		case "name":
			d.tmp, ok = s.leaf(d.tmp[:0])
			w.name = string(d.tmp)
		case "instance":
			var i xmlInstance
			ok = s.instance(&i)
			d.addInstance(w, &i)
		default:
			ok = s.skip()
		}
		return ok
	})
}

func (s *xmlScanner) instance(w *xmlInstance) bool {
	if s.empty {
		return true
	}
	name := s.name
	expect := 0
	for {
		// Servers write the elements in one order: try the one that comes
		// next in it first.
		f := xmlInstanceOrder[expect]
		more, predicted, ok := s.nextOrTag(name, xmlInstanceTags[f])
		if !ok {
			return false
		}
		if !more {
			return true
		}
		if !predicted {
			f = xmlInstanceFieldOf(s.name)
		}
		if f >= 0 {
			expect = xmlInstanceNext[f]
		}
		if !s.instanceField(w, f) {
			return false
		}
	}
}

// xmlInstanceOrder is the order of the elements of an instance as Java
// servers and this package write them; xmlInstanceTags are their start
// tags, and xmlInstanceNext the position in the order after each one's.
var (
	xmlInstanceOrder = [...]int{xInstanceID, xHostName, xApp, xIPAddr, xSID, xStatus, xOverriddenStatusLower,
		xPort, xSecurePort, xCountryID, xDataCenterInfo, xLeaseInfo, xMetadata, xAppGroupName, xHomePageURL,
		xStatusPageURL, xHealthCheckURL, xSecureHealthCheckURL, xVIPAddress, xSecureVIPAddress,
		xIsCoordinatingDiscoveryServer, xLastUpdatedTimestamp, xLastDirtyTimestamp, xActionType, xASGName}
	xmlInstanceTags [xMetadata + 1][]byte
	xmlInstanceNext [xMetadata + 1]int
)

func init() {
	names := map[int]string{}
	for _, name := range []string{"instanceId", "hostName", "app", "appGroupName", "ipAddr", "sid", "homePageUrl",
		"statusPageUrl", "healthCheckUrl", "secureHealthCheckUrl", "vipAddress", "secureVipAddress", "asgName",
		"status", "overriddenstatus", "overriddenStatus", "actionType", "isCoordinatingDiscoveryServer", "countryId",
		"lastUpdatedTimestamp", "lastDirtyTimestamp", "port", "securePort", "dataCenterInfo", "leaseInfo", "metadata"} {
		names[xmlInstanceFieldOf([]byte(name))] = name
	}
	for f, name := range names {
		xmlInstanceTags[f] = []byte("<" + name + ">")
	}
	for n, f := range xmlInstanceOrder {
		xmlInstanceNext[f] = (n + 1) % len(xmlInstanceOrder)
	}
}

// instanceField reads the child f of an instance, whose start tag was just
// read.
func (s *xmlScanner) instanceField(w *xmlInstance, f int) bool {
	d := s.d
	var ok bool
	switch {
	case f < 0:
		return s.skip()
	case f < xTextFields:
		start := len(d.text)
		d.text, ok = s.leaf(d.text)
		d.setText(w, f, start)
		return ok
	case f == xPort || f == xSecurePort:
		p := &w.port
		if f == xSecurePort {
			p = &w.securePort
		}
		p.present = true
		if s.hasEnabled {
			p.enabled = enabledOf(s.enabled)
		}
		d.tmp, ok = s.leaf(d.tmp[:0])
		p.number = parseXMLNum(d.tmp)
		return ok
	case f == xMetadata:
		return s.stringMap(&w.metadata)
	case f == xLeaseInfo:
		w.lease.present = true
		return s.lease(&w.lease)
	default: // xDataCenterInfo
		dc := &w.dataCenter
		dc.present = true
		if s.hasClass {
			dc.amazonClass = string(s.class) == AmazonDataCenterClass
		}
		return s.children(func() bool {
			switch string(s.name) {
			case "name":
				var ok bool
				start := len(d.text)
				d.text, ok = s.leaf(d.text)
				dc.name = span{start, len(d.text)}
				return ok
			case "metadata":
				return s.stringMap(&dc.metadata)
			}
			return s.skip()
		})
	}
}

// lease reads the children of a <leaseInfo>, trying first the one that
// comes next in the order servers write them.
func (s *xmlScanner) lease(l *xmlLease) bool {
	if s.empty {
		return true
	}
	name := s.name
	expect := 0
	for {
		f := leaseKeyOrder[expect]
		more, predicted, ok := s.nextOrTag(name, xmlLeaseTags[f])
		if !ok {
			return false
		}
		if !more {
			return true
		}
		if !predicted {
			f = xmlLeaseFieldOf(s.name)
		}
		if f < 0 {
			if !s.skip() {
				return false
			}
			continue
		}
		expect = leaseKeyNext[f]
		s.d.tmp, ok = s.leaf(s.d.tmp[:0])
		if !ok {
			return false
		}
		l.f[f] = parseXMLNum(s.d.tmp)
	}
}

var xmlLeaseTags = func() (t [leaseFields][]byte) {
	for f, name := range leaseFieldNames {
		t[f] = []byte("<" + name + ">")
	}
	return t
}()

func (s *xmlScanner) stringMap(m *xmlMapState) bool {
	d := s.d
	from := len(d.pairs)
	ok := s.children(func() bool {
		kStart := len(d.text)
		d.text = appendUnescapedName(d.text, s.name)
		vStart := len(d.text)
		var ok bool
		d.text, ok = s.leaf(d.text)
		d.addPair(kStart, vStart)
		return ok
	})
	*m = xmlMapState{true, from, len(d.pairs)}
	return ok
}
