package readmecheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// goCommand is a go run or go test command of the documentation: where
// it is, and its words after "go run" or "go test".
type goCommand struct {
	where string
	verb  string // run or test
	args  []string
}

// goCommands returns the go run and go test commands of the
// documentation's shell blocks and inline code spans, each ended by the
// end of its line (continuations joined) or by |, ;, &&, ||, # or ).
func goCommands(t *testing.T) []goCommand {
	t.Helper()
	re := regexp.MustCompile(`\bgo (run|test)\s+([^\n|;#)&]*)`)
	span := regexp.MustCompile("`(go (?:run|test) [^`]+)`")
	var out []goCommand
	add := func(where, text string) {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			var args []string
			for _, w := range strings.Fields(m[2]) {
				args = append(args, strings.Trim(w, `"'`))
			}
			out = append(out, goCommand{where: where, verb: m[1], args: args})
		}
	}
	for _, p := range pages(t) {
		for _, b := range p.blocks {
			if b.lang == "sh" {
				add(b.where(), strings.ReplaceAll(b.body, "\\\n", " "))
			}
		}
		for _, text := range p.prose {
			for _, m := range span.FindAllStringSubmatch(strings.ReplaceAll(text, "\n", " "), -1) {
				add(p.name, m[1])
			}
		}
	}
	return out
}

// eurekaFlags returns the flags cmd/eureka has, from its -h.
func eurekaFlags(t *testing.T) map[string]bool {
	t.Helper()
	out, _ := exec.Command(binary(t, "eureka"), "-h").CombinedOutput()
	flags := map[string]bool{"h": true, "help": true} // the flag package's own
	for _, m := range regexp.MustCompile(`(?m)^  -(\S+)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	if len(flags) == 0 {
		t.Fatalf("no flag in cmd/eureka -h:\n%s", out)
	}
	return flags
}

// eurekabenchCommands returns the subcommands of cmd/eurekabench, from
// its command table.
func eurekabenchCommands(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, "cmd/eurekabench/main.go"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*\{"([a-z-]+)", "`).FindAllStringSubmatch(string(src), -1) {
		names[m[1]] = true
	}
	if len(names) == 0 {
		t.Fatal("no subcommand found in cmd/eurekabench/main.go")
	}
	return names
}

// Every shell block of the documentation is valid shell, the packages
// its go run and go test commands name exist, every flag given to
// cmd/eureka is one of its flags, and every eurekabench subcommand one of
// its subcommands.
func TestShellCommands(t *testing.T) {
	for _, b := range blocksOf(t, "sh") {
		if out, err := exec.Command("bash", "-n", "-c", b.body).CombinedOutput(); err != nil {
			t.Errorf("the shell block at %s is not valid shell: %v\n%s\n%s", b.where(), err, out, b.body)
		}
	}
	if testing.Short() {
		return // the flags need cmd/eureka built
	}
	cmds := goCommands(t)
	if len(cmds) == 0 {
		t.Fatal("no go run or go test command in the documentation")
	}
	flags := eurekaFlags(t)
	subs := eurekabenchCommands(t)
	flag := regexp.MustCompile(`^-([a-z][a-z0-9-]*)(=.*)?$`)
	for _, c := range cmds {
		pkg := ""
		for n, a := range c.args {
			if strings.HasPrefix(a, "./") {
				dir := strings.TrimSuffix(strings.TrimSuffix(a, "..."), "/")
				if matches, _ := filepath.Glob(filepath.Join(repoRoot, dir, "*.go")); dir != "." && len(matches) == 0 {
					t.Errorf("%s: go %s %s: no Go package at %s", c.where, c.verb, strings.Join(c.args, " "), a)
				}
				if pkg == "" {
					pkg = dir
				}
				continue
			}
			if c.verb != "run" || pkg == "" {
				continue
			}
			switch pkg {
			case "./cmd/eureka":
				if m := flag.FindStringSubmatch(a); m != nil && !flags[m[1]] {
					t.Errorf("%s: go run ./cmd/eureka has no flag -%s", c.where, m[1])
				}
			case "./cmd/eurekabench":
				if n > 0 && strings.HasPrefix(c.args[n-1], "./") && !strings.HasPrefix(a, "-") && !subs[a] {
					t.Errorf("%s: go run ./cmd/eurekabench has no subcommand %s", c.where, a)
				}
			}
		}
	}
}

// The README's set-up is exactly two commands for a fresh machine: one
// runs the gateway with its embedded registry, one runs the tests, and
// .ci/run runs that one.
func TestSetUpCommands(t *testing.T) {
	readme := readPage(t, "README.md")
	var setup []block
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for _, b := range readme.blocks {
		// The section a block is in: the last "## " heading above its fence.
		inSetUp := false
		for n := b.line - 2; n >= 0; n-- {
			if strings.HasPrefix(lines[n], "## ") {
				inSetUp = lines[n] == "## Set-up"
				break
			}
		}
		if inSetUp {
			setup = append(setup, b)
		}
	}
	if len(setup) != 1 || setup[0].lang != "sh" {
		t.Fatalf("README.md's Set-up section has %d blocks, want one sh block", len(setup))
	}
	var cmds []string
	for _, l := range strings.Split(setup[0].body, "\n") {
		if cmd, _, _ := strings.Cut(l, "#"); strings.TrimSpace(cmd) != "" {
			cmds = append(cmds, strings.TrimSpace(cmd))
		}
	}
	want := []string{"go run ./cmd/caddy run --config Caddyfile", "go test ./..."}
	if !slices.Equal(cmds, want) {
		t.Fatalf("README.md's set-up commands are %q, want %q", cmds, want)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want[1]) + `$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's test command %q", want[1])
	}
}
