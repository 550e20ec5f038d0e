package readmecheck

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/internal/proc"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

const modulePath = "github.com/eurekagate/eurekagate"

// withPackages returns the packages the documents' xcaddy commands name
// with --with (a version or replacement after the name dropped).
func withPackages(t *testing.T, docs ...string) []string {
	t.Helper()
	re := regexp.MustCompile(`xcaddy build[^\n]*`)
	with := regexp.MustCompile(`--with\s+([\w./-]*\w)`)
	var out []string
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range re.FindAllString(string(data), -1) {
			for _, m := range with.FindAllStringSubmatch(cmd, -1) {
				if !slices.Contains(out, m[1]) {
					out = append(out, m[1])
				}
			}
		}
	}
	return out
}

// The documented `xcaddy build --with github.com/eurekagate/eurekagate`
// works: a Caddy main importing exactly the packages the documentation's
// --with names, as xcaddy writes it, builds against this tree (a replace
// directive, as `--with module=.` makes) and lists our modules. It builds
// with the environment's GOFLAGS and GOPROXY, from the module cache.
func TestXcaddyBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Caddy binary")
	}
	docs := []string{"../../examples/gateway/README.md"}
	for _, name := range pageNames(t) {
		docs = append(docs, filepath.Join(repoRoot, name))
	}
	pkgs := withPackages(t, docs...)
	if len(pkgs) == 0 {
		t.Fatal("no xcaddy build --with command in the documentation")
	}
	for _, p := range pkgs {
		if p != modulePath && !strings.HasPrefix(p, modulePath+"/") {
			t.Fatalf("--with %s is not a package of %s", p, modulePath)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The build module requires what this module requires, at the same
	// versions, so nothing new is looked up; ours comes from the tree.
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod := regexp.MustCompile(`(?m)^module .*$`).ReplaceAllString(string(gomod), "module caddy")
	mod += "\nrequire " + modulePath + " v0.0.0-00010101000000-000000000000\n\nreplace " + modulePath + " => " + root + "\n"
	imports := ""
	for _, p := range pkgs {
		imports += "\t_ " + `"` + p + `"` + "\n"
	}
	main := "package main\n\nimport (\n\tcaddycmd \"github.com/caddyserver/caddy/v2/cmd\"\n\n" +
		"\t// plug in Caddy modules here\n\t_ \"github.com/caddyserver/caddy/v2/modules/standard\"\n" + imports +
		")\n\nfunc main() {\n\tcaddycmd.Main()\n}\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"go.mod": mod, "go.sum": string(sum), "main.go": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "caddy")
	env := []string{"GOFLAGS=" + strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"), "GOWORK=off"}
	if err := proc.GoBuild(context.Background(), dir, env, bin, "."); err != nil {
		t.Fatalf("the xcaddy main: %v\n%s", err, main)
	}
	for _, id := range testkit.UnlistedModules(t, bin) {
		t.Errorf("the xcaddy build does not list %s", id)
	}
}
