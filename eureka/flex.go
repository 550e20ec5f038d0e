package eureka

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
)

// Lenient scalar types for decoding: each accepts the JSON shapes that real
// clients send for the field, and null as "absent".

var errBadNumber = errors.New("eureka: not a number")

// flexString accepts a string, a number or a boolean (kept as its text).
type flexString struct {
	V   string
	Set bool
}

func (f *flexString) UnmarshalJSON(b []byte) error {
	switch {
	case isNull(b):
		*f = flexString{}
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString{V: s, Set: true}
	case len(b) > 0 && (b[0] == '{' || b[0] == '['):
		return errors.New("eureka: expected a string")
	default:
		*f = flexString{V: string(b), Set: true}
	}
	return nil
}

// flexInt accepts a number or a numeric string.
type flexInt struct {
	V   int64
	Set bool
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		*f = flexInt{}
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			*f = flexInt{}
			return nil
		}
	}
	v, err := parseInt(s)
	if err != nil {
		return err
	}
	*f = flexInt{V: v, Set: true}
	return nil
}

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

// flexBool accepts a boolean or the strings "true"/"false" (any case).
type flexBool struct {
	V   bool
	Set bool
}

func (f *flexBool) UnmarshalJSON(b []byte) error {
	switch s := strings.ToLower(strings.Trim(string(b), `"`)); {
	case isNull(b):
		*f = flexBool{}
	case s == "true":
		*f = flexBool{V: true, Set: true}
	case s == "false" || s == "":
		*f = flexBool{V: false, Set: true}
	default:
		return errors.New("eureka: expected a boolean")
	}
	return nil
}

// flexMap is a string map whose values may be any scalar; the Java EmptyMap
// marker ("@class") is dropped.
type flexMap map[string]string

func (f *flexMap) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		*f = nil
		return nil
	}
	var raw map[string]flexString
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m := make(map[string]string, len(raw))
	for k, v := range raw {
		if !v.Set || (k == "@class" && strings.HasSuffix(v.V, "EmptyMap")) {
			continue
		}
		m[k] = v.V
	}
	*f = m
	return nil
}

// flexList accepts an array of T or a single T, as old XStream-JSON servers
// wrote a lone element without the array.
type flexList[T any] []T

func (f *flexList[T]) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case isNull(b):
		*f = nil
		return nil
	case len(b) > 0 && b[0] == '[':
		var list []T
		if err := json.Unmarshal(b, &list); err != nil {
			return err
		}
		*f = list
		return nil
	}
	var one T
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*f = []T{one}
	return nil
}

func isNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }
