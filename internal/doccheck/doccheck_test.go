package doccheck

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportedIdentifiersAreDocumented checks every package of the
// module, as go list ./... finds them, commands and examples included:
// their package comment is what go doc shows of them.
func TestExportedIdentifiersAreDocumented(t *testing.T) {
	for _, p := range packages(t) {
		dir := p.rel()
		t.Run(dir, func(t *testing.T) {
			fset := token.NewFileSet()
			var files []*ast.File
			for _, name := range p.sourceFiles() {
				f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
				if err != nil {
					t.Fatal(err)
				}
				// A file for other platforms is documentation too; a
				// build-ignored program in the directory is not the package.
				if f.Name.Name == p.Name {
					files = append(files, f)
				}
			}
			d, err := doc.NewFromFiles(fset, files, p.ImportPath)
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(d.Doc) == "" {
				t.Errorf("package %s has no package comment", dir)
			}
			check := func(kind, name, text string) {
				if strings.TrimSpace(text) == "" {
					t.Errorf("%s.%s (%s) has no doc comment", dir, name, kind)
				}
			}
			for _, f := range d.Funcs {
				check("func", f.Name, f.Doc)
			}
			for _, ty := range d.Types {
				check("type", ty.Name, ty.Doc)
				for _, f := range ty.Funcs {
					check("func", f.Name, f.Doc)
				}
				for _, m := range ty.Methods {
					check("method", ty.Name+"."+m.Name, m.Doc)
				}
				checkValues(t, dir, ty.Consts)
				checkValues(t, dir, ty.Vars)
			}
			checkValues(t, dir, d.Consts)
			checkValues(t, dir, d.Vars)
		})
	}
}

// checkValues accepts a comment on the group or on each exported name.
func checkValues(t *testing.T, dir string, values []*doc.Value) {
	for _, v := range values {
		if strings.TrimSpace(v.Doc) != "" {
			continue
		}
		for _, spec := range v.Decl.Specs {
			vs := spec.(*ast.ValueSpec)
			for _, name := range vs.Names {
				if name.IsExported() && vs.Doc == nil && vs.Comment == nil {
					t.Errorf("%s.%s has no doc comment", dir, name.Name)
				}
			}
		}
	}
}
