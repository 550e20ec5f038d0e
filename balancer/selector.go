package balancer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// RouteHeader carries the subset a gateway chose for a request to the
// instance that gets it, as a Selector's text ("version=2.1"). A service
// that serves it through Propagate has its HTTPClient calls go to the same
// subset of the next service, so that a canary request stays on canary
// instances end to end. Gateways remove it from the requests of clients
// other than trusted proxies.
const RouteHeader = "X-Eurekagate-Route"

// A Selector picks a subset of an application's instances by their Eureka
// metadata: an instance is in it when, for every key of the selector, its
// metadata has the key with one of the selector's values for it. An
// instance without one of the keys is in no subset.
//
// Its text, String, is what RouteHeader carries: the keys in order, each
// as key=value, or key=v1|v2 for a list, joined by ", ". The zero Selector
// selects every instance.
type Selector struct {
	terms []term
	text  string
}

type term struct {
	key    string
	values []string
}

// NewSelector returns the selector of terms: each key with the values it
// accepts (one for equality, more for "in" a list). Keys and values are
// metadata keys and values: a key is a name of letters, digits, '-', '_'
// and '.'; a value has no space, comma, '|' or '=' and no control
// character.
func NewSelector(terms map[string][]string) (Selector, error) {
	if len(terms) == 0 {
		return Selector{}, errors.New("a selector needs at least one metadata key")
	}
	var s Selector
	for k, vs := range terms {
		if err := checkKey(k); err != nil {
			return Selector{}, err
		}
		if len(vs) == 0 {
			return Selector{}, fmt.Errorf("metadata key %q has no value to select", k)
		}
		for _, v := range vs {
			if err := checkValue(v); err != nil {
				return Selector{}, fmt.Errorf("metadata key %q: %w", k, err)
			}
		}
		vs = slices.Clone(vs)
		slices.Sort(vs)
		s.terms = append(s.terms, term{key: k, values: slices.Compact(vs)})
	}
	slices.SortFunc(s.terms, func(a, b term) int { return strings.Compare(a.key, b.key) })
	var b strings.Builder
	for n, t := range s.terms {
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.key)
		b.WriteByte('=')
		b.WriteString(strings.Join(t.values, "|"))
	}
	s.text = b.String()
	return s, nil
}

// ParseSelector parses a Selector's text, as RouteHeader carries it.
func ParseSelector(text string) (Selector, error) {
	terms := map[string][]string{}
	for part := range strings.SplitSeq(text, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return Selector{}, fmt.Errorf("selector %q: %q is not key=value", text, part)
		}
		k = strings.TrimSpace(k)
		if _, dup := terms[k]; dup {
			return Selector{}, fmt.Errorf("selector %q: key %q comes twice", text, k)
		}
		terms[k] = strings.Split(strings.TrimSpace(v), "|")
	}
	s, err := NewSelector(terms)
	if err != nil {
		return Selector{}, fmt.Errorf("selector %q: %w", text, err)
	}
	return s, nil
}

func checkKey(k string) error {
	if k == "" {
		return errors.New("a metadata key is empty")
	}
	for _, c := range []byte(k) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("metadata key %q: only letters, digits, '-', '_' and '.' may name a key", k)
		}
	}
	return nil
}

func checkValue(v string) error {
	if v == "" {
		return errors.New("an empty value selects nothing")
	}
	for _, c := range []byte(v) {
		if c <= ' ' || c == 0x7f || c == ',' || c == '|' || c == '=' || c == '"' {
			return fmt.Errorf("value %q: a value has no space, comma, '|', '=', '\"' or control character", v)
		}
	}
	return nil
}

// Without returns s without its term for key, and the values that term
// had (nil when s has none): for a key that is not metadata, such as the
// routing core's region.
func (s Selector) Without(key string) (Selector, []string) {
	i := slices.IndexFunc(s.terms, func(t term) bool { return t.key == key })
	if i < 0 {
		return s, nil
	}
	rest := make(map[string][]string, len(s.terms)-1)
	for n, t := range s.terms {
		if n != i {
			rest[t.key] = t.values
		}
	}
	if len(rest) == 0 {
		return Selector{}, s.terms[i].values
	}
	out, _ := NewSelector(rest) // the terms were valid
	return out, s.terms[i].values
}

// IsZero reports whether s is the zero Selector, which selects every
// instance.
func (s Selector) IsZero() bool { return len(s.terms) == 0 }

// String returns the selector's text: "version=2.1", "version=2.0|2.1,
// zone=east".
func (s Selector) String() string { return s.text }

// Match reports whether inst is in the subset.
func (s Selector) Match(inst *eureka.InstanceInfo) bool {
	for _, t := range s.terms {
		v, ok := inst.Metadata[t.key]
		if !ok || !slices.Contains(t.values, v) {
			return false
		}
	}
	return true
}

// Filter returns the instances of list in the subset: list itself when
// all are, nil when none is.
func (s Selector) Filter(list []*eureka.InstanceInfo) []*eureka.InstanceInfo {
	n := 0
	for _, i := range list {
		if s.Match(i) {
			n++
		}
	}
	switch n {
	case len(list):
		return list
	case 0:
		return nil
	}
	out := make([]*eureka.InstanceInfo, 0, n)
	for _, i := range list {
		if s.Match(i) {
			out = append(out, i)
		}
	}
	return out
}

// Selected keeps the instances a Selector selected from an application's
// list while that list (its backing array and length) stays the same, so
// that the calls to a subset filter nothing and the balancer sees one
// list per subset. The zero value is ready to use; it is safe for
// concurrent use.
type Selected struct {
	last atomic.Pointer[selected]
}

type selected struct {
	data **eureka.InstanceInfo // the backing array of the list it was made from
	n    int
	list []*eureka.InstanceInfo
}

// Of returns the instances of list that sel selects.
func (c *Selected) Of(sel Selector, list []*eureka.InstanceInfo) []*eureka.InstanceInfo {
	if len(list) == 0 {
		return nil
	}
	if s := c.last.Load(); s != nil && s.data == &list[0] && s.n == len(list) {
		return s.list
	}
	sub := sel.Filter(list)
	c.last.Store(&selected{data: &list[0], n: len(list), list: sub})
	return sub
}
