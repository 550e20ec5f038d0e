package doccheck

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// archFacts are what the architecture check compares the document with.
type archFacts struct {
	module string // the module's path, which names its root package
	// imports maps each package of the module (by its directory, "." for
	// the root) to the module's packages its non-test files import.
	imports map[string][]string
	// exists reports whether a path from the module's root (a pattern
	// such as cmd/eureka/spring*.go) names a file or directory.
	exists func(path string) bool
}

// checkArchitecture returns what docs/ARCHITECTURE.md (doc) says that the
// facts contradict, each problem with its line: a package without a row
// or a row naming no package; an imports column other than the row's
// packages' imports of the module's packages (named missing and extra);
// with the order claimed, an import of a row further down; a file the
// document names that does not exist.
func checkArchitecture(doc string, f archFacts) []string {
	rows, problems := archTable(doc)
	at := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("docs/ARCHITECTURE.md:%d: ", line)+fmt.Sprintf(format, args...))
	}
	rowOf := map[string]int{} // package → index in rows
	pkgsOf := make([][]string, len(rows))
	isPackageRow := make([]bool, len(rows))
	for i, r := range rows {
		names := codeSpans(r.name)
		if len(names) == 0 {
			at(r.line, "the row names no package or directory in backquotes")
		}
		isPackageRow[i] = len(names) > 0
		for _, n := range names {
			if strings.HasSuffix(n, "/") { // a directory that is no package of the module
				isPackageRow[i] = false
				if !f.exists(n) {
					at(r.line, "row %s: there is no directory %s", r.name, n)
				}
				continue
			}
			p := f.pkg(n)
			if _, ok := f.imports[p]; !ok {
				at(r.line, "row %s: `%s` is no package of the module (go list ./...)", r.name, n)
				continue
			}
			if j, dup := rowOf[p]; dup {
				at(r.line, "row %s: `%s` has a row already, line %d", r.name, n, rows[j].line)
				continue
			}
			rowOf[p] = i
			pkgsOf[i] = append(pkgsOf[i], p)
		}
	}
	var rowless []string
	for p := range f.imports {
		if _, ok := rowOf[p]; !ok {
			rowless = append(rowless, p)
		}
	}
	slices.Sort(rowless)
	for _, p := range rowless {
		problems = append(problems, fmt.Sprintf("docs/ARCHITECTURE.md: package `%s` (go list ./...) has no row: add one, its imports column %s", p, importsColumn(f.rowImports([]string{p}))))
	}

	ordered := strings.Contains(doc, archOrderClaim)
	for i, r := range rows {
		if !isPackageRow[i] {
			continue
		}
		actual := f.rowImports(pkgsOf[i])
		var claimed []string
		for _, n := range codeSpans(r.importsCol) {
			claimed = append(claimed, f.pkg(n))
		}
		missing, extra := setDiff(actual, claimed), setDiff(claimed, actual)
		if len(claimed) == 0 && len(actual) == 0 && !strings.HasPrefix(r.importsCol, "none") {
			at(r.line, "row %s: the imports column does not say none", r.name)
		}
		if len(missing) > 0 || len(extra) > 0 {
			var what []string
			if len(missing) > 0 {
				what = append(what, "imports "+quoted(missing)+", missing from its imports column")
			}
			if len(extra) > 0 {
				what = append(what, "its imports column names "+quoted(extra)+", which it does not import")
			}
			at(r.line, "row %s: %s (go list says %s)", r.name, strings.Join(what, "; "), importsColumn(actual))
		}
		if !ordered {
			continue
		}
		for _, imp := range actual {
			if j, ok := rowOf[imp]; ok && j > i {
				at(r.line, "row %s imports `%s`, whose row (line %d) is below it, against %q", r.name, imp, rows[j].line, archOrderClaim)
			}
		}
	}
	problems = append(problems, checkNamedFiles(doc, rows, pkgsOf, f)...)
	return problems
}

// checkNamedFiles returns a problem for each file the document names in
// backquotes that does not exist: a path from the module's root as
// written; a bare name (stream.go) in a row in the directory of one of
// the row's packages or of a package the row names, elsewhere in the
// directory of any package.
func checkNamedFiles(doc string, rows []archRow, pkgsOf [][]string, f archFacts) []string {
	var problems []string
	byLine := map[int]int{}
	for i, r := range rows {
		byLine[r.line] = i
	}
	for _, m := range codeSpan.FindAllStringSubmatchIndex(doc, -1) {
		name := doc[m[2]:m[3]]
		line := strings.Count(doc[:m[0]], "\n") + 1
		if strings.ContainsAny(name, " :") {
			continue
		}
		if first, _, slash := strings.Cut(name, "/"); slash {
			// A path, if it starts at one of the root's directories
			// (api/changes is a dashboard route).
			if first != "" && f.exists(first+"/") && !f.exists(name) {
				problems = append(problems, fmt.Sprintf("docs/ARCHITECTURE.md:%d: `%s` does not exist", line, name))
			}
			continue
		}
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		var dirs []string
		if i, ok := byLine[line]; ok {
			dirs = append(dirs, pkgsOf[i]...)
			for _, n := range codeSpans(rows[i].holds) {
				if _, ok := f.imports[f.pkg(n)]; ok {
					dirs = append(dirs, f.pkg(n))
				}
			}
		}
		if len(dirs) == 0 {
			for p := range f.imports {
				dirs = append(dirs, p)
			}
		}
		if !slices.ContainsFunc(dirs, func(d string) bool { return f.exists(path.Join(d, name)) }) {
			slices.Sort(dirs)
			problems = append(problems, fmt.Sprintf("docs/ARCHITECTURE.md:%d: `%s` is in none of %s", line, name, quoted(dirs)))
		}
	}
	return problems
}

// pkg is the package a name in the document stands for: the module's
// path for its root, else the directory as written.
func (f archFacts) pkg(name string) string {
	if name == f.module {
		return "."
	}
	return name
}

// rowImports are the module's packages that pkgs import, other than
// pkgs themselves, sorted.
func (f archFacts) rowImports(pkgs []string) []string {
	var out []string
	for _, p := range pkgs {
		for _, imp := range f.imports[p] {
			if !slices.Contains(pkgs, imp) && !slices.Contains(out, imp) {
				out = append(out, imp)
			}
		}
	}
	slices.Sort(out)
	return out
}

// importsColumn is how the table writes a list of imports.
func importsColumn(imports []string) string {
	if len(imports) == 0 {
		return "none"
	}
	return quoted(imports)
}

// setDiff is what of a is not in b, sorted.
func setDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}
