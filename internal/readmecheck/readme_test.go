package readmecheck

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/eurekagate/eurekagate/caddymodule"
	"github.com/eurekagate/eurekagate/routing"
)

// snippets returns the bodies of the documentation's fenced blocks of the
// given language, on every page.
func snippets(t *testing.T, lang string) []string {
	t.Helper()
	var out []string
	for _, b := range blocksOf(t, lang) {
		out = append(out, b.body)
	}
	return out
}

func TestGoSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet")
	}
	list := blocksOf(t, "go")
	if len(list) < 2 {
		t.Fatalf("found %d Go snippets, want the fx and the plain-constructor ones", len(list))
	}
	for _, b := range list {
		// Inside the module, so the snippet builds against this tree.
		// Named "_…": go list ./..., which doccheck runs meanwhile, skips it.
		dir, err := os.MkdirTemp(".", "_snippet")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(b.body), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("go", "vet", "./"+filepath.Base(dir)).CombinedOutput()
		if err != nil {
			t.Errorf("the Go snippet at %s does not build:\n%s\n%s", b.where(), out, b.body)
		}
	}
}

// inlineFragments returns the documentation's inline code spans that are
// Caddyfile: those that start with one of our directives or options, or
// with a reverse_proxy subdirective, or that open a block.
func inlineFragments(t *testing.T) []string {
	t.Helper()
	start := regexp.MustCompile(`^(eureka|eureka_server|eureka_gateway|eureka_dashboard|reverse_proxy|dynamic|lb_policy|transport)(\s|$)`)
	block := regexp.MustCompile(`\{(\s|$)`)
	span := regexp.MustCompile("`([^`\n]+)`")
	var out []string
	for _, p := range pages(t) {
		for _, text := range p.prose {
			// Spans may break across lines within a paragraph.
			for _, m := range span.FindAllStringSubmatch(strings.ReplaceAll(text, "\n", " "), -1) {
				if start.MatchString(m[1]) || block.MatchString(m[1]) {
					out = append(out, m[1])
				}
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

// Every Caddyfile fragment of the documentation adapts: the fenced
// caddyfile blocks as they are, and the inline ones where they belong.
func TestCaddyfileSnippetsAdapt(t *testing.T) {
	list := blocksOf(t, "caddyfile")
	if len(list) == 0 {
		t.Fatal("no Caddyfile snippet")
	}
	for _, b := range list {
		if _, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(b.body), nil); err != nil {
			t.Errorf("the Caddyfile snippet at %s: %v\n%s", b.where(), err, b.body)
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
		_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(src), nil)
		if err != nil && strings.HasPrefix(frag, "transport") {
			// transport is eureka_gateway's option too: its table row's
			// name alone, or its syntax, whose first choice must adapt.
			first, _, _ := strings.Cut(frag, `\|`)
			gw := "http://:1 {\n\teureka_gateway {\n" + first + "\n\t}\n}\n"
			if _, _, gwErr := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(gw), nil); gwErr == nil || frag == "transport" {
				err = nil
			}
		}
		if err != nil {
			t.Errorf("inline fragment `%s`: %v", frag, err)
		}
	}
}

// Every JSON block of the documentation parses.
func TestJSONBlocksParse(t *testing.T) {
	for _, b := range blocksOf(t, "json") {
		var v any
		if err := json.Unmarshal([]byte(b.body), &v); err != nil {
			t.Errorf("the JSON block at %s: %v\n%s", b.where(), err, b.body)
		}
	}
}

// Every fenced block's language is one the checks know (or none, for a
// diagram): a Go program or a Caddyfile tagged otherwise would be checked
// by nothing.
func TestBlocksHaveLanguages(t *testing.T) {
	known := map[string]bool{"go": true, "caddyfile": true, "sh": true, "text": true, "json": true, "yaml": true, "": true}
	for _, p := range pages(t) {
		for _, b := range p.blocks {
			if !known[b.lang] {
				t.Errorf("the block at %s has language %q; use one of go, caddyfile, sh, json, yaml, text (or none for a diagram)", b.where(), b.lang)
			}
		}
	}
}

// Every yaml block that is a traffic rules document (its top level has
// apps) parses as one. A shared limit's needs a Redis: its rules are parsed
// with the zero routing.SharedLimits, which only checks them.
func TestRulesDocumentsParse(t *testing.T) {
	for _, b := range blocksOf(t, "yaml") {
		if !strings.HasPrefix(b.body, "apps:") && !strings.Contains(b.body, "\napps:") {
			continue // another YAML (a Prometheus rule, say)
		}
		if _, err := (routing.RulesLimits{Shared: new(routing.SharedLimits)}).Parse(b.where(), []byte(b.body)); err != nil {
			t.Errorf("the rules at %s do not parse: %v", b.where(), err)
		}
	}
}
