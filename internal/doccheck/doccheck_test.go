package doccheck

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var packages = []string{".", "eureka", "registry", "registry/httpapi", "registry/replication", "registry/metrics", "discovery", "balancer", "gateway", "routing", "fxmodules", "caddymodule", "dashboard", "internal/eurekahttp", "internal/fastserve", "internal/tlsfiles", "internal/version"}

func TestExportedIdentifiersAreDocumented(t *testing.T) {
	for _, dir := range packages {
		t.Run(dir, func(t *testing.T) {
			fset := token.NewFileSet()
			path := filepath.Join("..", "..", dir)
			pkgs, err := parser.ParseDir(fset, path, func(fi os.FileInfo) bool {
				return !strings.HasSuffix(fi.Name(), "_test.go")
			}, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pkgs {
				files := make([]*ast.File, 0, len(p.Files))
				for _, f := range p.Files {
					files = append(files, f)
				}
				d, err := doc.NewFromFiles(fset, files, "github.com/eurekagate/eurekagate/"+dir)
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
			}
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
