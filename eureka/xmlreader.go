package eureka

import (
	"bytes"
	"encoding/xml"
)

// xmlReader gives the XML decoder's one walker (xml_decode.go) the
// elements of a document from one of two sources: its own scanner of the
// bytes (xmlscan.go), for what servers and clients write, or encoding/xml's
// tokens, for everything the scanner gives up on (comments, CDATA, name
// spaces, DOCTYPE, malformed markup), which so gets encoding/xml's answer.
// The walker's calls (open, child, leaf, skip, root, appendKey) check
// which source they read, a branch that costs next to nothing on the
// scanner's path.
type xmlReader struct {
	data   []byte
	pos    int
	depth  int
	tokens *xml.Decoder // the source, when set

	// The start tag just read: its name (and, from encoding/xml, its name
	// space), whether it was <name/>, and the last "enabled" and "class"
	// attributes.
	name               []byte
	nameSpace          string
	empty              bool
	hasEnabled         bool
	hasClass           bool
	enabled, class     []byte
	enabledBuf, clsBuf []byte
	nameBuf, discard   []byte
}

func newXMLReader(data []byte, tokens bool) xmlReader {
	r := xmlReader{data: data}
	if tokens {
		r.tokens = xml.NewDecoder(bytes.NewReader(data))
	}
	return r
}

// xmlElement is a walk over the children of the element whose start tag
// was just read:
//
//	e := r.open(leaseTable) // or r.open(nil)
//	for ok := true; r.child(&e, ok); {
//		ok = ... // read the child e.field (or the one named r.name)
//	}
//	if e.failed { ... }
type xmlElement struct {
	// fields, if set, are the fields the children's names name: child looks
	// the name up, after trying the names that come next in the order
	// servers write (fieldOrder.predict), and skips the other children.
	fields *fieldTable
	expect int // the position in that order

	field  int    // the field of the child at hand, or -1
	name   []byte // the element's own name, to match its end tag
	empty  bool   // it was <name/>
	failed bool
}

// open starts a walk over the children of the element just started.
func (r *xmlReader) open(fields *fieldTable) xmlElement {
	return xmlElement{fields: fields, name: r.name, empty: r.empty}
}

// child moves to the next child and reads its start tag, after which
// r.name, r.empty and the attributes are the child's; ok says whether the
// caller could read the child before. It reports false at the element's
// end tag and on an error, which sets e.failed.
func (r *xmlReader) child(e *xmlElement, ok bool) bool {
	if !ok {
		e.failed = true
		return false
	}
	t := e.fields
	for {
		switch {
		case r.tokens != nil:
			if !r.tokenChild(e) {
				return false
			}
		case e.empty:
			return false
		default:
			r.indentation()
			if t != nil && len(t.xml.steps) > 0 && !r.atEndTag() {
				// The child that comes next in the order is tried here
				// rather than in predict when it has no attributes: it is
				// the one nearly always, and a call costs.
				p := e.expect
				if !r.plainTag(t.xml.steps[p].expect) {
					if p = t.xml.predict(r.data[r.pos:], p, true); p >= 0 && !r.expected(t.xml.steps[p].expect) {
						p = -1
					}
				}
				if p >= 0 {
					e.field, e.expect = t.xml.steps[p].field, t.xml.steps[p].next
					return true
				}
			}
			more, ok := r.next(e.name)
			if !more || !ok {
				e.failed = !ok
				return false
			}
		}
		e.field = -1
		if t == nil {
			return true
		}
		if e.field = t.field(r.name); e.field >= 0 {
			e.expect = t.xml.next[e.field]
			return true
		}
		if !r.skip() {
			e.failed = true
			return false
		}
	}
}

// appendKey appends the map key that the name of the element just
// started stands for, with XStream's escapes undone (see EscapeXMLName)
// and, from encoding/xml, its name space before a colon.
func (r *xmlReader) appendKey(b []byte) []byte {
	if r.nameSpace != "" {
		b = appendUnescapedName(b, r.nameSpace)
		b = append(b, ':')
	}
	return appendUnescapedName(b, r.name)
}

func (r *xmlReader) tokenRoot() bool {
	for {
		tok, err := r.tokens.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(xml.StartElement); ok {
			r.start(s)
			return true
		}
	}
}

func (r *xmlReader) tokenLeaf(b []byte) ([]byte, bool) {
	for {
		tok, err := r.tokens.Token()
		if err != nil {
			return b, false
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if r.tokens.Skip() != nil {
				return b, false
			}
		case xml.CharData:
			b = append(b, tok...)
		case xml.EndElement:
			return b, true
		}
	}
}

// tokenChild is child from encoding/xml's tokens: text and other tokens
// between the children are dropped.
func (r *xmlReader) tokenChild(e *xmlElement) bool {
	for {
		tok, err := r.tokens.Token()
		if err != nil {
			e.failed = true
			return false
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			r.start(tok)
			return true
		case xml.EndElement:
			return false
		}
	}
}

// start takes a start tag from encoding/xml as the scanner's startTag
// reads one: its local name and the last "enabled" and "class"
// attributes, whatever their name space.
func (r *xmlReader) start(s xml.StartElement) {
	r.nameBuf = append(r.nameBuf[:0], s.Name.Local...)
	r.name, r.nameSpace = r.nameBuf, s.Name.Space
	r.empty, r.hasEnabled, r.hasClass = false, false, false
	for _, a := range s.Attr {
		switch a.Name.Local {
		case "enabled":
			r.enabledBuf = append(r.enabledBuf[:0], a.Value...)
			r.enabled, r.hasEnabled = r.enabledBuf, true
		case "class":
			r.clsBuf = append(r.clsBuf[:0], a.Value...)
			r.class, r.hasClass = r.clsBuf, true
		}
	}
}
