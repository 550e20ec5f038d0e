package doccheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// root is the module's root, relative to this package's directory, where
// the tests run.
var root = filepath.Join("..", "..")

// listed is what the checks read of go list's record of a package.
type listed struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string // non-test files of this platform's build
	CgoFiles   []string
	// IgnoredGoFiles are the non-test files of other platforms (such as
	// gateway's *_other.go), and any build-ignored file.
	IgnoredGoFiles []string
	Imports        []string // of the non-test files
	Module         struct{ Path string }
}

// rel is the package's path in the module: "." for the root, else its
// directory such as "registry/httpapi".
func (p listed) rel() string {
	if p.ImportPath == p.Module.Path {
		return "."
	}
	return strings.TrimPrefix(p.ImportPath, p.Module.Path+"/")
}

// sourceFiles are the package's non-test files of every platform.
func (p listed) sourceFiles() []string {
	var out []string
	for _, f := range slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles) {
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, f)
		}
	}
	return out
}

// internalImports are the module's packages p imports, as rel paths.
func (p listed) internalImports() []string {
	var out []string
	for _, imp := range p.Imports {
		if imp == p.Module.Path {
			out = append(out, ".")
		} else if r, ok := strings.CutPrefix(imp, p.Module.Path+"/"); ok {
			out = append(out, r)
		}
	}
	return out
}

// modulePackages is every package of the module, as go list ./... gives
// them (run once for the checks that need it).
var modulePackages = sync.OnceValues(func() ([]listed, error) {
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New("go list -json ./...: " + err.Error() + ": " + stderr.String())
	}
	var pkgs []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			return pkgs, nil
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
})

// packages is modulePackages, stopping the test if go list failed.
func packages(t *testing.T) []listed {
	t.Helper()
	pkgs, err := modulePackages()
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}
