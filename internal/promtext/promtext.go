// Package promtext reads a Prometheus registry's scrape in the text
// format for tests: the lines of the families asked, sorted, and a
// comparison that names the lines missing and those unexpected.
package promtext

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Exposition is what a scrape of reg returns, in the text format, its
// lines sorted (a family's HELP and TYPE among them), or those of the
// families names when given. (It does what prometheus/testutil's
// GatherAndCompare does, without testutil's dependencies, which go.mod
// does not have.)
func Exposition(t testing.TB, reg *prometheus.Registry, names ...string) []string {
	t.Helper()
	w := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}).
		ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != 200 {
		t.Fatalf("scrape: %d %s", w.Code, w.Body)
	}
	return SortedLines(w.Body.String(), names...)
}

// SortedLines are text's lines, sorted, without the blank ones and, with
// names, those of the other families.
func SortedLines(text string, names ...string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l == "" {
			continue
		}
		if len(names) > 0 && !slices.Contains(names, Family(l)) {
			continue
		}
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// Family is the name of the family a line of the text format belongs to.
func Family(line string) string {
	if f, ok := strings.CutPrefix(line, "# HELP "); ok {
		line = f
	} else if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
		line = f
	}
	name, _, _ := strings.Cut(line, " ")
	name, _, _ = strings.Cut(name, "{")
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if n, ok := strings.CutSuffix(name, s); ok && strings.HasSuffix(n, "_seconds") {
			return n
		}
	}
	return name
}

// CompareLines reports the lines of want that got lacks and those of got
// that want lacks.
func CompareLines(t testing.TB, got, want []string) {
	t.Helper()
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("missing: %s", l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("unexpected: %s", l)
		}
	}
}
