package springconfig

import (
	"strings"
)

// Canonical is the one form of a property name that Spring's relaxed
// binding treats as the same property: every element lower case, with
// its dashes and underscores dropped, so that service-url, serviceUrl,
// service_url and SERVICEURL (from SERVICE_URL's environment form, one
// element per underscore) are one name. List indexes ([0]) are kept.
func Canonical(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '-' || c == '_':
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// EnvName is the property an environment variable names in Spring's
// form: lower case, an underscore between elements, so that
// EUREKA_SERVER_ENABLESELFPRESERVATION is
// eureka.server.enableselfpreservation, which Canonical matches to
// eureka.server.enable-self-preservation.
func EnvName(variable string) string {
	return strings.ToLower(strings.ReplaceAll(variable, "_", "."))
}

// VariableName is the environment variable of a property in Spring's
// form: SERVER_PORT for server.port, EUREKA_SERVER_ENABLESELFPRESERVATION
// for eureka.server.enable-self-preservation.
func VariableName(name string) string {
	name = strings.NewReplacer("-", "", "[", "_", "]", "").Replace(name)
	return strings.ToUpper(strings.ReplaceAll(name, ".", "_"))
}

// Closest returns the name of known nearest to name (by the edit
// distance of their canonical forms), and whether it is near enough to
// be a typo of it: within a quarter of its length, at least 2.
func Closest(name string, known []string) (string, bool) {
	c := Canonical(name)
	best, bestD := "", -1
	for _, k := range known {
		d := distance(c, Canonical(k))
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	return best, bestD >= 0 && bestD <= max(2, len(c)/4)
}

// distance is the Levenshtein distance of a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
