package eureka

import "errors"

// JSONReader reads a JSON document held in memory value by value, with
// encoding/json's rules (grammar, nesting limit, unquoting, key matching),
// in one pass and without reflection. It is for documents that embed
// InstanceInfo objects, such as the peer replication batch and its answer
// (package registry/replication): their decoders read their own fields
// with it, and the instances with Instance, in the same pass.
//
// Every method returns ErrCannotParse on malformed input; after that error
// the reader is not usable.
type JSONReader struct{ d *jsonDecoder }

// ErrNotInstance is returned by JSONReader.Instance for a value that is
// well-formed JSON but not an InstanceInfo document: a number, an array,
// an instance whose hostName is an object, and so on. The reader has read
// past the value and can go on.
var ErrNotInstance = errors.New("eureka: not an InstanceInfo document")

// NewJSONReader returns a reader positioned before the document's value.
func NewJSONReader(data []byte) *JSONReader { return &JSONReader{newJSONDecoder(data)} }

// KeyIs reports whether an object key names field as encoding/json
// matches keys to struct field names: exactly, or else case-insensitively
// with Unicode folding.
func KeyIs(key []byte, field string) bool { return string(key) == field || foldEqual(key, field) }

// Kind returns the first byte of the next value: '{', '[', '"', 'n'
// (null), 't' or 'f' (a boolean), '-' or a digit (a number); 0 at the end.
func (r *JSONReader) Kind() byte { return r.d.ws() }

// Object reads an object, calling member with each key (unquoted, valid
// only during the call). member must read the value, with a method of r.
func (r *JSONReader) Object(member func(key []byte) error) error {
	var o jsonObject
	var err error
	for r.d.member(&o, err == nil) {
		err = member(o.key)
	}
	switch {
	case err != nil:
		return err
	case o.failed:
		return ErrCannotParse
	}
	return nil
}

// Array reads an array, calling elem for each element; elem must read it.
func (r *JSONReader) Array(elem func() error) error {
	var a jsonArray
	var err error
	for r.d.item(&a, err == nil) {
		err = elem()
	}
	switch {
	case err != nil:
		return err
	case a.failed:
		return ErrCannotParse
	}
	return nil
}

// Null reads the next value if it is null, and reports whether it was.
func (r *JSONReader) Null() bool {
	if r.d.ws() != 'n' {
		return false
	}
	start := r.d.pos
	if r.d.null() {
		return true
	}
	r.d.pos = start
	return false
}

// String reads a string, unquoted as encoding/json unquotes it.
func (r *JSONReader) String() (string, error) {
	if r.d.ws() != '"' {
		return "", ErrCannotParse
	}
	b, _, ok := r.d.value()
	if !ok {
		return "", ErrCannotParse
	}
	return string(b), nil
}

// Number reads a number and returns its text.
func (r *JSONReader) Number() (string, error) {
	switch c := r.d.ws(); {
	case c == '-' || '0' <= c && c <= '9':
		b, ok := r.d.number()
		if ok {
			return string(b), nil
		}
	}
	return "", ErrCannotParse
}

// Skip reads past the next value, checking it.
func (r *JSONReader) Skip() error {
	if !r.d.skip() {
		return ErrCannotParse
	}
	return nil
}

// Instance reads the next value as DecodeInstanceJSON reads a document:
// {"instance":{...}}, a bare InstanceInfo object, or null (an instance
// with every default; check Null first to tell null apart). For a value
// that is JSON but that DecodeInstanceJSON would refuse, it returns
// ErrNotInstance, having read past the value.
func (r *JSONReader) Instance() (*InstanceInfo, error) {
	d := r.d
	pos, depth := d.pos, d.depth
	if i, ok := d.instanceDocument(); ok {
		return i, nil
	}
	// Read the value again, as a value only: encoding/json, which the
	// readers built on this one stand in for, keeps such a value raw and
	// refuses it only if it is still there at the end.
	d.pos, d.depth = pos, depth
	d.reset()
	if !d.skip() {
		return nil, ErrCannotParse
	}
	return nil, ErrNotInstance
}

// End checks that nothing but white space follows the value read.
func (r *JSONReader) End() error {
	if !r.d.atEnd() {
		return ErrCannotParse
	}
	return nil
}
