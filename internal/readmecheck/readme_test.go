package readmecheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/eurekagate/eurekagate/caddymodule"
)

// snippets returns the README's fenced blocks of the given language.
func snippets(t *testing.T, lang string) []string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	parts := strings.Split(string(data), "```")
	for n := 1; n < len(parts); n += 2 {
		if body, ok := strings.CutPrefix(parts[n], lang+"\n"); ok {
			out = append(out, body)
		}
	}
	return out
}

func TestGoSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet")
	}
	list := snippets(t, "go")
	if len(list) < 2 {
		t.Fatalf("found %d Go snippets, want the fx and the plain-constructor ones", len(list))
	}
	for n, src := range list {
		// Inside the module, so the snippet builds against this tree.
		dir, err := os.MkdirTemp(".", "snippet")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("go", "vet", "./"+filepath.Base(dir)).CombinedOutput()
		if err != nil {
			t.Errorf("Go snippet %d does not build:\n%s\n%s", n+1, out, src)
		}
	}
}

func TestCaddyfileSnippetsAdapt(t *testing.T) {
	list := snippets(t, "caddyfile")
	if len(list) == 0 {
		t.Fatal("no Caddyfile snippet")
	}
	for n, src := range list {
		if _, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(src), nil); err != nil {
			t.Errorf("Caddyfile snippet %d: %v\n%s", n+1, err, src)
		}
	}
}
