package doccheck

import (
	"fmt"
	"regexp"
	"strings"
)

// archRow is one row of docs/ARCHITECTURE.md's package table.
type archRow struct {
	line                    int // in the document, from 1
	name, holds, importsCol string
}

// archTableHeader opens the package table.
const archTableHeader = "| package | holds | imports (of ours) |"

// archOrderClaim is the sentence by which the document claims that the
// table is in import order; the check holds it to it while it says so.
const archOrderClaim = "A row imports only packages of the rows above it"

// archTable returns the package table's rows, and a problem for each line
// of it that is not a row of three cells (a stray | splits a cell).
func archTable(doc string) (rows []archRow, problems []string) {
	lines := strings.Split(doc, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == archTableHeader {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, []string{"no table opens with " + archTableHeader}
	}
	for i := start + 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		cells := splitCells(lines[i])
		if len(cells) != 3 {
			problems = append(problems, fmt.Sprintf("docs/ARCHITECTURE.md:%d: %d cells, the table has 3 (an unescaped | inside a cell?)", i+1, len(cells)))
			continue
		}
		rows = append(rows, archRow{line: i + 1, name: cells[0], holds: cells[1], importsCol: cells[2]})
	}
	return rows, problems
}

// splitCells splits a Markdown table line at its unescaped |, leaving out
// the empty text before the first and after the last.
func splitCells(line string) []string {
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	if rest := strings.TrimSpace(cell.String()); rest != "" {
		cells = append(cells, rest)
	}
	if len(cells) > 0 && cells[0] == "" {
		cells = cells[1:]
	}
	return cells
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// codeSpans are the texts between backquotes in s.
func codeSpans(s string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// quoted lists names as the document writes them, `a`, `b`.
func quoted(names []string) string {
	return "`" + strings.Join(names, "`, `") + "`"
}
