package readmecheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// delimiterCell is a cell of a table's delimiter row: dashes, aligned by
// colons or not.
var delimiterCell = regexp.MustCompile(`^:?-+:?$`)

// cells splits a table row into its cells, without the outer pipes; a
// pipe escaped (\|) or in a code span stays in its cell.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var out []string
	var cell strings.Builder
	code := false
	for i := 0; i < len(row); i++ {
		switch c := row[i]; {
		case c == '\\' && i+1 < len(row):
			cell.WriteByte(c)
			cell.WriteByte(row[i+1])
			i++
		case c == '`':
			code = !code
			cell.WriteByte(c)
		case c == '|' && !code:
			out = append(out, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(c)
		}
	}
	return append(out, strings.TrimSpace(cell.String()))
}

// tableProblem says what keeps the lines of one table (a run of lines
// that start with a pipe) from rendering as one, or "" if nothing does:
// its second line must be the delimiter row, with a cell per header
// cell, and no row may have more cells than the header.
func tableProblem(lines []string) string {
	if len(lines) < 2 {
		return "a table needs a header row and a delimiter row (|---|---|) under it"
	}
	head, delim := cells(lines[0]), cells(lines[1])
	for _, c := range delim {
		if !delimiterCell.MatchString(c) {
			return "its second line is not a delimiter row (|---|---|): without one it renders as text"
		}
	}
	if len(delim) != len(head) {
		return "the delimiter row has " + strconv.Itoa(len(delim)) + " cells, the header " + strconv.Itoa(len(head))
	}
	for n, l := range lines[2:] {
		if c := cells(l); len(c) > len(head) {
			return "row " + strconv.Itoa(n+3) + " has " + strconv.Itoa(len(c)) + " cells, the header " + strconv.Itoa(len(head)) + ": the rest are dropped"
		}
	}
	return ""
}

// Every Markdown table of the documentation renders as a table: each has
// its delimiter row under its header, as many cells as the header. A
// table is a run of lines that start with a pipe, outside fenced blocks.
func TestTablesHaveDelimiterRows(t *testing.T) {
	for _, name := range pageNames(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, name))
		if err != nil {
			t.Fatal(err)
		}
		var table []string
		start, fenced := 0, false
		check := func() {
			if len(table) > 0 {
				if problem := tableProblem(table); problem != "" {
					t.Errorf("%s:%d: table: %s", name, start, problem)
				}
			}
			table = nil
		}
		lines := strings.Split(string(data), "\n")
		for n := 0; n < len(lines); n++ {
			l := lines[n]
			if strings.HasPrefix(l, "```") {
				check()
				fenced = !fenced
				continue
			}
			if !fenced && strings.HasPrefix(strings.TrimSpace(l), "|") {
				if len(table) == 0 {
					start = n + 1
				}
				table = append(table, l)
				continue
			}
			if len(table) > 0 && strings.TrimSpace(l) != "" {
				// GFM makes such a line a row of its own.
				t.Errorf("%s:%d: table: a row broken over lines: the line does not start with a pipe", name, n+1)
				for ; n+1 < len(lines) && strings.TrimSpace(lines[n+1]) != "" && !strings.HasPrefix(lines[n+1], "|"); n++ {
				}
				continue
			}
			check()
		}
		check()
	}
}
