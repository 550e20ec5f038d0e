package registry

import (
	"fmt"
	"slices"
	"strings"
)

// Query lists: a read's apps= and regions= parameters, comma-separated
// names. Reads are open by default, so a list is bounded before it is
// parsed, and parsed in linear time (a set, not a search of the names so
// far): 15,000 names cost 0.48 s of CPU a request when each was checked
// against the ones before it.

const (
	// MaxQueryListBytes bounds a query list's raw value (after URL
	// decoding): 32 KiB, some 2,000 names of 16 bytes.
	MaxQueryListBytes = 32 << 10
	// MaxQueryListNames bounds the names a query list holds, repeats and
	// blanks included: 4,096.
	MaxQueryListNames = 4096
)

// ListTooLongError is the refusal of a query list over MaxQueryListBytes
// or MaxQueryListNames; the REST API answers it 400 with its text.
type ListTooLongError struct {
	// Param is the parameter: "apps" or "regions".
	Param string
	// Bytes is the list's length; Names how many names it holds (0 when
	// Bytes alone refused it).
	Bytes, Names int
}

// Error names the parameter and the bound it passed.
func (e *ListTooLongError) Error() string {
	if e.Names > 0 {
		return fmt.Sprintf("%s: more than %d names; a list may hold at most %d (ask for the whole registry instead)",
			e.Param, MaxQueryListNames, MaxQueryListNames)
	}
	return fmt.Sprintf("%s: %d bytes; a list may be at most %d bytes (ask for the whole registry instead)",
		e.Param, e.Bytes, MaxQueryListBytes)
}

// parseList splits list at commas, trims each name and puts it in the
// form norm gives (keep reports whether to keep it), and returns the
// names sorted, without blanks or repeats. A list over the bounds is a
// *ListTooLongError for param.
func parseList(param, list string, norm func(string) string, keep func(string) bool) ([]string, error) {
	return parseListBy(param, list, norm, keep, strings.Compare)
}

// parseListBy is parseList with the comparison of two names, through
// which it orders and deduplicates them all: the one place the work of a
// parse grows faster than the names, which a test counts.
func parseListBy(param, list string, norm func(string) string, keep func(string) bool, compare func(a, b string) int) ([]string, error) {
	if len(list) > MaxQueryListBytes {
		return nil, &ListTooLongError{Param: param, Bytes: len(list)}
	}
	if n := strings.Count(list, ",") + 1; n > MaxQueryListNames {
		return nil, &ListTooLongError{Param: param, Bytes: len(list), Names: n}
	}
	var out []string
	for name := range strings.SplitSeq(list, ",") {
		if name = norm(strings.TrimSpace(name)); name != "" && keep(name) {
			out = append(out, name)
		}
	}
	slices.SortFunc(out, compare)
	return slices.CompactFunc(out, func(a, b string) bool { return compare(a, b) == 0 }), nil
}

// Interest parses a comma-separated list of application names, as the
// watch's and the full fetch's apps parameter carries it: upper-cased,
// sorted, without blanks or repeats. A list over MaxQueryListBytes or
// MaxQueryListNames is a *ListTooLongError.
func Interest(list string) ([]string, error) {
	return parseList("apps", list, strings.ToUpper, func(string) bool { return true })
}

// nameSet is a list of names as a set for lookups per change or per
// application: sorted (parseList's lists are already, and then it
// allocates nothing, however often a long poll wakes), looked up by
// binary search; empty for none.
func nameSet(names []string) sortedNames {
	if !slices.IsSorted(names) {
		names = slices.Sorted(slices.Values(names))
	}
	return sortedNames(names)
}

// sortedNames is a sorted list of names.
type sortedNames []string

// has reports whether name is in n.
func (n sortedNames) has(name string) bool {
	_, ok := slices.BinarySearch(n, name)
	return ok
}
