package doccheck

import (
	"os"
	"path/filepath"
	"testing"
)

// TestArchitectureIsTrue holds docs/ARCHITECTURE.md's package table to
// the tree: a row for every package, each row's imports column what go
// list says its non-test files import of the module, the rows in import
// order while the document claims so, and every file it names there. A
// failure names the row and the imports to add and remove.
func TestArchitectureIsTrue(t *testing.T) {
	doc, facts := architecture(t)
	for _, p := range checkArchitecture(doc, facts) {
		t.Error(p)
	}
}

// architecture reads the document and the facts of the tree.
func architecture(t *testing.T) (string, archFacts) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := packages(t)
	f := archFacts{module: pkgs[0].Module.Path, imports: map[string][]string{}, exists: func(p string) bool {
		m, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(p)))
		return len(m) > 0
	}}
	for _, p := range pkgs {
		f.imports[p.rel()] = p.internalImports()
	}
	return string(doc), f
}
