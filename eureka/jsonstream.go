package eureka

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// ReadApplicationsJSON reads an {"applications":{...}} document from r as
// it arrives and hands each application to each, in order, as soon as it
// is read: a registry of a million instances is never held whole, plain
// or decoded. It accepts what DecodeApplicationsJSON accepts ("application"
// an array or a single object, keys matched case-insensitively, unknown
// keys skipped) and returns each's first error, or ErrCannotParse wrapping
// where the document went wrong. Applications already handed over stay
// handed over: a caller that needs all or nothing keeps its own account.
func ReadApplicationsJSON(r io.Reader, each func(*Application) error) error {
	d := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	err := readObject(d, func(key string) error {
		if !KeyIs([]byte(key), "applications") {
			return d.SkipValue()
		}
		return readObject(d, func(key string) error {
			if !KeyIs([]byte(key), "application") {
				return d.SkipValue()
			}
			return readList(d, func(raw []byte) error {
				doc := make([]byte, 0, len(raw)+len(`{"application":}`))
				doc = append(append(append(doc, `{"application":`...), raw...), '}')
				a, err := DecodeApplicationJSON(doc)
				if err != nil {
					return err
				}
				return each(a)
			})
		})
	})
	if err == nil {
		if _, eof := d.ReadToken(); !errors.Is(eof, io.EOF) {
			err = errors.New("data after the document")
		}
	}
	var stop stopped
	switch {
	case err == nil:
		return nil
	case errors.As(err, &stop):
		return stop.err
	case errors.Is(err, ErrCannotParse):
		return err
	}
	return fmt.Errorf("%w: at byte %d: %w", ErrCannotParse, d.InputOffset(), err)
}

// stopped carries each's error through the walk untouched.
type stopped struct{ err error }

func (s stopped) Error() string { return s.err.Error() }

// readObject walks the object at d's position, calling member with d at
// each member's value.
func readObject(d *jsontext.Decoder, member func(key string) error) error {
	if t, err := d.ReadToken(); err != nil {
		return err
	} else if t.Kind() != '{' {
		return fmt.Errorf("%v where an object was expected", t.Kind())
	}
	for d.PeekKind() != '}' {
		t, err := d.ReadToken()
		if err != nil {
			return err
		}
		if err := member(t.String()); err != nil {
			return err
		}
	}
	_, err := d.ReadToken()
	return err
}

// readList walks a list of objects as Eureka writes one: an array (a null
// element read as {}), a single object, or null, calling elem with each
// object's bytes, valid until the next read.
func readList(d *jsontext.Decoder, elem func(raw []byte) error) error {
	call := func() error {
		v, err := d.ReadValue()
		if err != nil {
			return err
		}
		if err := elem(v); err != nil {
			return stopped{err}
		}
		return nil
	}
	switch d.PeekKind() {
	case 'n':
		_, err := d.ReadToken()
		return err
	case '{':
		return call()
	case '[':
	default:
		_, err := d.ReadToken()
		if err == nil {
			err = errors.New("a list of objects was expected")
		}
		return err
	}
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	for d.PeekKind() != ']' {
		if d.PeekKind() == 'n' { // an empty object, as DecodeApplicationsJSON has it
			if _, err := d.ReadToken(); err != nil {
				return err
			}
			if err := elem([]byte("{}")); err != nil {
				return stopped{err}
			}
			continue
		}
		if err := call(); err != nil {
			return err
		}
	}
	_, err := d.ReadToken()
	return err
}
