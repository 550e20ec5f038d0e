package eureka

import (
	"errors"
	"reflect"
	"testing"
)

// A document that embeds instances, read with a JSONReader: each instance
// as DecodeInstanceJSON reads it alone, the values around them with the
// reader's own methods, and JSON that is no instance read past.
func TestJSONReader(t *testing.T) {
	inst := string(AppendInstanceJSONBody(nil, sampleInstance()))
	doc := []byte(`{"list":[` + inst + `, null, {"instance":` + inst + `}, 5, [1, {"a": [2]}], {"hostName": {}}],
		"s": "a\u00e9\ud800", "n": -1.5e3, "OTHER": {"x": [true, false, null]}}`)
	want, err := DecodeInstanceJSON([]byte(inst))
	if err != nil {
		t.Fatal(err)
	}
	var list []any
	var s, n string
	other := false
	r := NewJSONReader(doc)
	err = r.Object(func(key []byte) error {
		var err error
		switch {
		case KeyIs(key, "list"):
			err = r.Array(func() error {
				if r.Null() {
					list = append(list, nil)
					return nil
				}
				i, err := r.Instance()
				switch {
				case errors.Is(err, ErrNotInstance):
					list = append(list, "not an instance")
					return nil
				case err == nil:
					list = append(list, i)
				}
				return err
			})
		case KeyIs(key, "s"):
			s, err = r.String()
		case KeyIs(key, "n"):
			n, err = r.Number()
		case KeyIs(key, "other"):
			other = true
			err = r.Skip()
		default:
			t.Errorf("unexpected key %q", key)
			err = r.Skip()
		}
		return err
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		t.Fatal(err)
	}
	wantList := []any{want, nil, want, "not an instance", "not an instance", "not an instance"}
	if !reflect.DeepEqual(list, wantList) {
		t.Errorf("list = %#v\nwant %#v", list, wantList)
	}
	if s != "a\u00e9\ufffd" || n != "-1.5e3" || !other {
		t.Errorf("s %q, n %q, other %v", s, n, other)
	}
}

func TestJSONReaderMalformed(t *testing.T) {
	read := func(doc string) error {
		r := NewJSONReader([]byte(doc))
		err := r.Object(func(key []byte) error {
			if KeyIs(key, "i") {
				_, err := r.Instance()
				return err
			}
			return r.Array(func() error { return r.Skip() })
		})
		if err == nil {
			err = r.End()
		}
		return err
	}
	for _, bad := range []string{`{"a":[}`, `{"a":[1,]}`, `{"i":{"hostName":}`, `{"i":[1,}`, `{} x`, `[]`, `{"a":{}}`} {
		if err := read(bad); err != ErrCannotParse {
			t.Errorf("%s: %v, want ErrCannotParse", bad, err)
		}
	}
	if err := read(`{"i":[1]}`); err != ErrNotInstance {
		t.Errorf("an array as an instance: %v, want ErrNotInstance", err)
	}
}
