package readmecheck

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/freeport"
	"github.com/eurekagate/eurekagate/internal/proc"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// The walks: sequences of shell commands on a page, each marked by an
// HTML comment on the line before its block, that the page tells a reader
// to run, with the output it shows after each:
//
//	<!-- walk NAME start -->   a command that keeps running (a terminal
//	                           of its own); the text block after it holds
//	                           the lines it prints once ready
//	<!-- walk NAME -->         a command that finishes; the text block
//	                           after it holds its whole output
//
// A text block right after a walk's shell block (prose between them
// allowed, no other block) is its expected output. In expected output a
// line that is only "…" stands for any lines, and "…" within a line for
// any text. A command without expected output must succeed; one with
// expected output is judged by its output alone (stdout and stderr
// together), on its first run, as a reader sees it: a step whose output
// depends on something done in the background (a rules file read again,
// a replication, a region fetched, a watch woken) has the page give the
// command that waits for it, a loop with a bound, before it or within it.
const (
	walkStartTimeout = 60 * time.Second // until a started command is ready
	walkRunTimeout   = 30 * time.Second // a finishing command's own limit
)

// walkPorts are the ports the walks use; each run gets free ones instead.
var walkPorts = []string{"8761", "8762", "8763", "8080", "9000", "9001", "2019"}

// walkDirs are the directories the walks write their files into; each run
// gets temporary ones instead.
var walkDirs = []string{"/tmp/eurekagate-tls", "/tmp/eurekagate-canary", "/tmp/eurekagate-spring", "/tmp/eurekagate-protect"}

// walkTools are the commands other than Go that walks may run; a walk
// that needs one this machine lacks is skipped, saying so.
var walkTools = []string{"curl", "python3", "openssl"}

type walkStep struct {
	block
	start  bool
	output string // the expected output; "" if none is shown
	has    bool   // whether an expected output is shown
}

type walk struct {
	name, page string
	steps      []walkStep
}

var walkMarker = regexp.MustCompile(`^walk (\S+)( start)?$`)

// walks returns the documentation's walks, in page order.
func walks(t *testing.T) []walk {
	t.Helper()
	var out []walk
	for _, p := range pages(t) {
		byName := map[string]int{}
		for n, b := range p.blocks {
			m := walkMarker.FindStringSubmatch(b.marker)
			if m == nil {
				continue
			}
			if b.lang != "sh" {
				t.Fatalf("%s: a walk step in a %q block; walk steps are sh blocks", b.where(), b.lang)
			}
			s := walkStep{block: b, start: m[2] != ""}
			if n+1 < len(p.blocks) && p.blocks[n+1].lang == "text" && p.blocks[n+1].marker == "" {
				s.output, s.has = p.blocks[n+1].body, true
			}
			i, ok := byName[m[1]]
			if !ok {
				i = len(out)
				byName[m[1]] = i
				out = append(out, walk{name: m[1], page: p.name})
			}
			out[i].steps = append(out[i].steps, s)
		}
	}
	return out
}

// The walks the issues ask for are there: the README's tour, the canary
// release, the one-machine cluster, the mutual-TLS cluster, the two
// regions, the README's Spring Cloud Eureka Server replaced, and a rate
// limit's 429.
func TestWalksPresent(t *testing.T) {
	var names []string
	for _, w := range walks(t) {
		names = append(names, w.page+":"+w.name)
	}
	for _, want := range []string{"README.md:tour", "docs/gateway.md:canary", "docs/clusters.md:cluster", "docs/clusters.md:mtls", "docs/clusters.md:regions", "README.md:spring", "docs/gateway.md:protect"} {
		if !slices.Contains(names, want) {
			t.Errorf("no walk %s; the walks are %v", want, names)
		}
	}
}

// Every walk runs as written, each command's output as the page shows it,
// on loopback: with free ports for the documented ones, a temporary
// directory for /tmp/eurekagate-tls, a copy of the root Caddyfile with
// those ports, and the binaries built once for go run ./cmd/caddy and
// go run ./cmd/eureka.
func TestWalks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Caddy and runs the walks")
	}
	for _, w := range walks(t) {
		t.Run(w.name, func(t *testing.T) { runWalk(t, w) })
	}
}

func runWalk(t *testing.T, w walk) {
	for _, tool := range walkTools {
		for _, s := range w.steps {
			if regexp.MustCompile(`(^|[\s(|;&])` + tool + `\s`).MatchString(s.body) {
				if _, err := exec.LookPath(tool); err != nil {
					t.Skipf("the walk runs %s, which is not installed", tool)
				}
			}
		}
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()

	// Free ports for the documented ones, distinct from each other and
	// below the kernel's ephemeral range (freeport): the walk binds them
	// seconds later, and the other packages' tests, run beside this one,
	// take their ports (":0" listeners, outgoing connections) from that
	// range, where one could take them first.
	free, err := freeport.Walks.Loopback(len(walkPorts))
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]string{}
	for i, p := range walkPorts {
		ports[p] = free[i]
	}
	portRE := regexp.MustCompile(`\b(` + strings.Join(walkPorts, "|") + `)\b`)
	dirs := map[string]string{}
	for n, d := range walkDirs {
		dirs[d] = filepath.Join(tmp, "files"+strconv.Itoa(n))
		if err := os.Mkdir(dirs[d], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rewrite := func(s string) string {
		s = portRE.ReplaceAllStringFunc(s, func(p string) string { return ports[p] })
		for d, to := range dirs {
			s = strings.ReplaceAll(s, d, to)
		}
		return s
	}
	caddyfile, err := os.ReadFile(filepath.Join(root, "Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "Caddyfile"), []byte(rewrite(string(caddyfile))), 0o644); err != nil {
		t.Fatal(err)
	}
	command := func(body string) string {
		body = rewrite(body)
		for _, name := range []string{"caddy", "eureka"} {
			if strings.Contains(body, "go run ./cmd/"+name) {
				body = strings.ReplaceAll(body, "go run ./cmd/"+name, binary(t, name))
			}
		}
		return strings.ReplaceAll(body, "--config Caddyfile", "--config "+filepath.Join(tmp, "Caddyfile"))
	}
	env := append(os.Environ(),
		"XDG_DATA_HOME="+filepath.Join(tmp, "xdg"), "XDG_CONFIG_HOME="+filepath.Join(tmp, "xdg"),
		"CADDY_ADMIN=127.0.0.1:"+ports["2019"], "PYTHONUNBUFFERED=1")
	shell := func(ctx context.Context, body string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "bash", "-c", command(body))
		cmd.Dir, cmd.Env = root, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		return cmd
	}

	for _, s := range w.steps {
		want := rewrite(s.output)
		if s.start {
			if !s.has {
				t.Fatalf("%s: a started command needs the lines it prints once ready, in a text block after it", s.where())
			}
			// Its own process group: an interrupt reaches what it started,
			// as Ctrl-C in its terminal does.
			p, err := proc.Start(context.Background(), command(s.body), proc.Config{Dir: root, Env: env, CleanEnv: true, Group: true}, "bash", "-c", command(s.body))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { stopGroup(t, p) })
			if err := p.Until(func(out string) bool { return matchOutput(want, out, true) }, walkStartTimeout, "ready"); err != nil {
				if p.Exited() {
					t.Fatalf("%s: the command exited (%v) before it was ready:\n%s\n%s", s.where(), p.Wait(0), s.body, p.String())
				}
				t.Fatalf("%s: not ready after %v: want the lines\n%s\ngot\n%s", s.where(), walkStartTimeout, want, p.String())
			}
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), walkRunTimeout)
		got, err := shell(ctx, s.body).CombinedOutput()
		cancel()
		if !s.has {
			if err != nil {
				t.Fatalf("%s: %v\n%s\n%s", s.where(), err, s.body, got)
			}
			continue
		}
		if !matchOutput(want, string(got), false) {
			t.Fatalf("%s: the output differs from the page's on the first run, as a reader runs it (exit: %v)\n--- command\n%s--- want\n%s--- got\n%s", s.where(), err, command(s.body), want, got)
		}
	}
}

// stopGroup stops a started command and whatever it started: an
// interrupt first, as Ctrl-C in its terminal, then a kill.
func stopGroup(t *testing.T, p *proc.Process) {
	p.Stop(os.Interrupt, 10*time.Second)
	if t.Failed() {
		t.Logf("the output of\n%s\n%s", p.Name, p.String())
	}
}

// matchOutput reports whether got matches want: line by line, a line
// "…" standing for any lines and "…" within a line for any text, trailing
// spaces and blank lines ignored. With within, want may be anywhere in
// got (a started command's output goes on).
func matchOutput(want, got string, within bool) bool {
	lines := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			out = append(out, strings.TrimRight(l, " \t\r"))
		}
		for len(out) > 0 && out[len(out)-1] == "" {
			out = out[:len(out)-1]
		}
		return out
	}
	pat := lines(want)
	if within {
		pat = append(append([]string{"…"}, pat...), "…")
	}
	var res []*regexp.Regexp
	for _, p := range pat {
		if p == "…" {
			res = append(res, nil)
			continue
		}
		parts := strings.Split(p, "…")
		for n := range parts {
			parts[n] = regexp.QuoteMeta(parts[n])
		}
		res = append(res, regexp.MustCompile("^"+strings.Join(parts, ".*")+"$"))
	}
	text := lines(got)
	// memo[i][j]: whether res[i:] matches text[j:].
	memo := map[[2]int]bool{}
	var match func(i, j int) bool
	match = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var v bool
		switch {
		case i == len(res):
			v = j == len(text)
		case res[i] == nil:
			v = match(i+1, j) || (j < len(text) && match(i, j+1))
		default:
			v = j < len(text) && res[i].MatchString(text[j]) && match(i+1, j+1)
		}
		memo[key] = v
		return v
	}
	return match(0, 0)
}

// builds holds the binaries of cmd/caddy and cmd/eureka, built once for
// every test that runs them in place of go run.
var builds = testkit.GoBuilds{Prefix: "readmecheck-bin"}

// binary returns ./cmd/<name> built from this tree.
func binary(t *testing.T, name string) string {
	t.Helper()
	return builds.Binary(t, repoRoot, "./cmd/"+name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	builds.Remove()
	os.Exit(code)
}
