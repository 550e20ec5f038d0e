package doccheck

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureCheckFindsDoctoredRows runs the check on copies of the
// document with the balancer's row made wrong, one way each, and wants
// the problems each makes, naming the row.
func TestArchitectureCheckFindsDoctoredRows(t *testing.T) {
	doc, facts := architecture(t)
	row := balancerRow(t, doc)
	lines := strings.Split(doc, "\n")
	top := lines[slices.Index(lines, archTableHeader)+1] // the separator
	wrong := strings.Replace(row, "`internal/perapp`", "`routing`", 1)
	cases := []struct {
		name, doc string
		want      []string // a part of each new problem
	}{
		{"an import missing and one extra", strings.Replace(doc, row, wrong, 1),
			[]string{"row `balancer`: imports `internal/perapp`, missing from its imports column; its imports column names `routing`, which it does not import"}},
		{"a row above one it imports", strings.Replace(strings.Replace(doc, row+"\n", "", 1), top, top+"\n"+row, 1),
			[]string{"row `balancer` imports `eureka`, whose row", "row `balancer` imports `internal/perapp`, whose row"}},
		{"a file that does not exist", strings.Replace(doc, row, strings.Replace(row, "`retry.go`", "`retries.go`", 1), 1),
			[]string{"`retries.go` is in none of `balancer`"}},
		{"a stray |", strings.Replace(doc, row, strings.Replace(row, "choosing an instance", "choosing | an instance", 1), 1),
			[]string{"4 cells, the table has 3", "package `balancer` (go list ./...) has no row"}},
		{"no row", strings.Replace(doc, row+"\n", "", 1),
			[]string{"package `balancer` (go list ./...) has no row: add one, its imports column `eureka`, `internal/perapp`"}},
	}
	before := unlined(checkArchitecture(doc, facts))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.doc == doc {
				t.Fatal("the doctoring changed nothing: the balancer's row is not as this test expects")
			}
			var found []string
			for _, p := range unlined(checkArchitecture(c.doc, facts)) {
				if !slices.Contains(before, p) {
					found = append(found, p)
				}
			}
			if len(found) != len(c.want) {
				t.Fatalf("%d new problems, want %d: %q", len(found), len(c.want), found)
			}
			for _, part := range c.want {
				if !slices.ContainsFunc(found, func(p string) bool { return strings.Contains(p, part) }) {
					t.Errorf("no problem says %q: %q", part, found)
				}
			}
		})
	}
}

// balancerRow is the package table's row of balancer, with the doctored
// names in it.
func balancerRow(t *testing.T, doc string) string {
	t.Helper()
	for l := range strings.SplitSeq(doc, "\n") {
		if strings.HasPrefix(l, "| `balancer` |") {
			for _, n := range []string{"`internal/perapp`", "`retry.go`", "choosing an instance"} {
				if !strings.Contains(l, n) {
					t.Fatalf("the balancer's row does not name %s, which this test changes", n)
				}
			}
			return l
		}
	}
	t.Fatal("the package table has no row for balancer")
	return ""
}

var linePrefix = regexp.MustCompile(`^docs/ARCHITECTURE\.md:\d+: `)

// unlined are the problems without their line numbers, which a moved or
// deleted row shifts.
func unlined(problems []string) []string {
	out := make([]string, len(problems))
	for i, p := range problems {
		out[i] = linePrefix.ReplaceAllString(p, "")
	}
	return out
}
