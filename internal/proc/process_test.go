package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain is also the child the tests start: with PROC_TEST_CHILD set it
// prints the lines of stdin's commands ("say TEXT", "ignore-term",
// "exit N") and, at the end of stdin, waits for a signal.
func TestMain(m *testing.M) {
	if os.Getenv("PROC_TEST_CHILD") == "" {
		os.Exit(m.Run())
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	ignore := false
	for _, cmd := range strings.Split(os.Getenv("PROC_TEST_CHILD"), ";") {
		switch verb, arg, _ := strings.Cut(cmd, " "); verb {
		case "say":
			fmt.Println(arg)
		case "partial":
			fmt.Print(arg)
		case "ignore-term":
			ignore = true
		case "exit":
			code, _ := strconv.Atoi(arg)
			os.Exit(code)
		}
	}
	for sig := range sigs {
		if !ignore {
			fmt.Println("stopping on", sig)
			os.Exit(0)
		}
	}
}

// child starts this test binary as a child running script.
func child(t *testing.T, script string, cfg Config) *Process {
	t.Helper()
	cfg.Env = append(cfg.Env, "PROC_TEST_CHILD="+script)
	p, err := Start(context.Background(), "the child", cfg, os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p
}

// Await returns the submatches of the first line that matches, whether it
// was written before the call or after, and the output is kept as lines
// and in the log file.
func TestAwaitAndOutput(t *testing.T) {
	log := filepath.Join(t.TempDir(), "child.log")
	p := child(t, "say listening on 127.0.0.1:4242;say ready", Config{LogFile: log})
	m, err := p.Await(regexp.MustCompile(`listening on (\S+)`), time.Minute)
	if err != nil || m[1] != "127.0.0.1:4242" {
		t.Fatalf("Await: %q, %v", m, err)
	}
	if _, err := p.Await(regexp.MustCompile(`^ready$`), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(syscall.SIGTERM, time.Minute); err != nil {
		t.Fatalf("a clean stop: %v", err)
	}
	want := []string{"listening on 127.0.0.1:4242", "ready", "stopping on terminated"}
	if got := p.Lines(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
	if n := p.Count(regexp.MustCompile(`^(ready|stopping)`)); n != 2 {
		t.Errorf("Count: %d, want 2", n)
	}
	b, err := os.ReadFile(log)
	if err != nil || string(b) != p.String() {
		t.Errorf("the log file holds %q (%v), the output %q", b, err, p.String())
	}
}

// A process that exits without the line ends the wait at once, with an
// error that names it and shows its output; a last line without its
// newline counts.
func TestAwaitExited(t *testing.T) {
	p := child(t, "say something else;partial no newline;exit 3", Config{})
	_, err := p.Await(regexp.MustCompile(`never`), time.Hour)
	if err == nil || !strings.Contains(err.Error(), "the child exited (exit status 3) before it logged") || !strings.Contains(err.Error(), "something else") {
		t.Fatalf("Await of a process that exits: %v", err)
	}
	if m, err := p.Await(regexp.MustCompile(`no (newline)`), time.Hour); err != nil || m[1] != "newline" {
		t.Errorf("the last, unended line: %q %v", m, err)
	}
}

// A line that does not come ends the wait when its deadline passes.
func TestAwaitDeadline(t *testing.T) {
	p := child(t, "say hello", Config{})
	_, err := p.Await(regexp.MustCompile(`never`), 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not log \"never\" within 50ms") || !strings.Contains(err.Error(), "hello") {
		t.Fatalf("Await past its deadline: %v", err)
	}
	if p.Exited() {
		t.Error("the child exited")
	}
}

// Stop kills a process that outlives the grace period after its signal;
// Wait says a process still runs.
func TestStopKillsAfterGrace(t *testing.T) {
	p := child(t, "ignore-term;say up", Config{})
	if _, err := p.Await(regexp.MustCompile(`^up$`), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(10 * time.Millisecond); err != ErrRunning {
		t.Fatalf("Wait on a running process: %v", err)
	}
	err := p.Stop(syscall.SIGTERM, 100*time.Millisecond)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("Stop of a process that ignores SIGTERM: %v, want killed", err)
	}
	if !p.Exited() {
		t.Error("not exited after Stop")
	}
}

// Stdout and Stderr, when given, take their stream away from the output.
func TestStreamsApart(t *testing.T) {
	var stdout Output
	p := child(t, "say on stdout", Config{Stdout: &stdout})
	if _, err := stdout.Await(regexp.MustCompile(`on stdout`), time.Minute); err != nil {
		t.Fatal(err)
	}
	p.Stop(syscall.SIGTERM, time.Minute)
	if stdout.String() != "on stdout\nstopping on terminated\n" || p.String() != "" {
		t.Errorf("stdout %q, the output %q", stdout.String(), p.String())
	}
}

// GoBuild builds a command, and its error holds go build's complaint.
func TestGoBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() { println(\"built\") }\n"), 0o644)
	bin := filepath.Join(dir, "m")
	if err := GoBuild(context.Background(), dir, []string{"GOFLAGS=-mod=mod"}, bin, "."); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin).CombinedOutput(); err != nil || string(out) != "built\n" {
		t.Fatalf("the binary: %q %v", out, err)
	}
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() { undefined() }\n"), 0o644)
	err := GoBuild(context.Background(), dir, nil, bin, ".")
	if err == nil || !strings.Contains(err.Error(), "go build .: exit status 1") || !strings.Contains(err.Error(), "undefined") {
		t.Fatalf("a build that fails: %v", err)
	}
}

// A process of its own group is signalled whole: a shell's child too.
// Until waits for the output as a whole.
func TestGroup(t *testing.T) {
	p, err := Start(context.Background(), "the shell", Config{Group: true}, "sh", "-c", `sh -c 'trap "echo child stops; exit 0" TERM; echo child up; while :; do sleep 1; done' & wait`)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	if err := p.Until(func(text string) bool { return strings.Contains(text, "child up") }, time.Minute, "the child up"); err != nil {
		t.Fatal(err)
	}
	p.Stop(syscall.SIGTERM, time.Minute)
	if !strings.Contains(p.String(), "child stops") {
		t.Errorf("the shell's child did not get the signal: %q", p.String())
	}
	if err := p.Until(func(string) bool { return false }, time.Minute, "never"); err == nil || !strings.Contains(err.Error(), "before never") {
		t.Errorf("Until on an ended output: %v", err)
	}
}
