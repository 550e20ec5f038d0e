package readmecheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// inlineFragments returns the README's inline code spans that are
// Caddyfile: those that start with one of our directives or options, or
// with a reverse_proxy subdirective, or that open a block.
func inlineFragments(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	start := regexp.MustCompile(`^(eureka|eureka_server|eureka_gateway|eureka_dashboard|reverse_proxy|dynamic|lb_policy|transport)(\s|$)`)
	block := regexp.MustCompile(`\{(\s|$)`)
	var out []string
	parts := strings.Split(string(data), "```")
	for n := 0; n < len(parts); n += 2 { // outside fenced blocks
		for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(parts[n], -1) {
			if start.MatchString(m[1]) || block.MatchString(m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// inContext wraps an inline fragment where it belongs: a global option,
// a site's directive, or a reverse_proxy subdirective.
func inContext(frag string) (string, bool) {
	first, _, _ := strings.Cut(frag, " ")
	switch first {
	case "eureka":
		return "{\n" + frag + "\n}\nhttp://:1 {\n\trespond ok\n}\n", true
	case "eureka_server", "eureka_gateway", "eureka_dashboard", "reverse_proxy":
		return "http://:1 {\n" + frag + "\n}\n", true
	case "dynamic", "lb_policy", "transport":
		return "http://:1 {\n\treverse_proxy {\n" + frag + "\n\t}\n}\n", true
	}
	return "", false
}

// Every Caddyfile fragment in the README adapts: the fenced caddyfile
// blocks as they are, and the inline ones where they belong.
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
	inline := inlineFragments(t)
	if len(inline) == 0 {
		t.Fatal("no inline Caddyfile fragment found")
	}
	for _, frag := range inline {
		src, ok := inContext(frag)
		if !ok {
			t.Errorf("inline fragment `%s`: a block of an unknown directive", frag)
			continue
		}
		if _, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(src), nil); err != nil {
			t.Errorf("inline fragment `%s`: %v", frag, err)
		}
	}
}
