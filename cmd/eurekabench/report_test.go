package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// regenerate is the command docs/performance.md names for its million
// table at 100,000 instances; the table follows it in the document.
const regenerate = "go run ./cmd/eurekabench report -table million -json cmd/eurekabench/testdata/million-100000.json"

// The million table of docs/performance.md is what eurekabench report
// renders from the record checked in beside this test: the document
// cannot drift from the run it reports.
func TestPerformanceDocTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), regenerate+"\n")
	if !ok {
		t.Fatalf("docs/performance.md does not name %q", regenerate)
	}
	lines := strings.Split(after, "\n")
	var got []string // the first table after the command
	for _, line := range lines[max(0, slices.IndexFunc(lines, isTableLine)):] {
		if !isTableLine(line) {
			break
		}
		got = append(got, line)
	}
	var stdout, stderr strings.Builder
	args := strings.Fields(strings.TrimPrefix(regenerate, "go run ./cmd/eurekabench "))
	for k, a := range args {
		if strings.HasSuffix(a, ".json") {
			args[k] = "../../" + a // from the repository's root, as the document runs it
		}
	}
	if code := dispatch(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if want := strings.TrimSuffix(stdout.String(), "\n"); strings.Join(got, "\n") != want {
		t.Errorf("docs/performance.md's table after %q is not what it renders; paste it:\n%s\n\nthe document's:\n%s", regenerate, want, strings.Join(got, "\n"))
	}
}

func isTableLine(line string) bool { return strings.HasPrefix(line, "|") }

// report refuses, by name, a table it does not know, no record, a
// record of another study, a file that is not a record and a record
// without a figure of the table.
func TestReportRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	summary := write("summary.json", `{"study":"summary"}`)
	bare := write("bare.json", `{"study":"million","figures":[{"name":"registrations.conns","value":16}]}`)
	notRecord := write("other.json", `{"name":"x"}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-table", "nope", "-json", bare}, `-table "nope": not one of million`},
		{[]string{"-table", "million"}, "-json: no record given"},
		{[]string{"-table", "million", "-json", summary}, "a record of summary, not of million"},
		{[]string{"-table", "million", "-json", notRecord}, "not a record of eurekabench (no study)"},
		{[]string{"-table", "million", "-json", bare}, `has no figure "registrations.rate"`},
		{[]string{"-table", "million", "-json", filepath.Join(dir, "none.json")}, "no such file"},
	} {
		var stdout, stderr strings.Builder
		if code := dispatch(append([]string{"report"}, c.args...), &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 1 and %q", c.args, code, stderr.String(), c.want)
		}
		if stdout.Len() > 0 {
			t.Errorf("%q: a table of a refused run: %q", c.args, stdout.String())
		}
	}
}
