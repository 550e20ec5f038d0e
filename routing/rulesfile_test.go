package routing

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// versionRules is a document sending every request for ORDERS to version v.
func versionRules(v string) string {
	return fmt.Sprintf("apps:\n  orders:\n    default: {version: %q}\n", v)
}

// brokenRules is refused at line 4.
const brokenRules = "apps:\n  orders:\n    default: {version: \"2.0\"}\n    fallback: sometimes\n"

// watchedFile is a RulesFile under test, its Apply recorded.
type watchedFile struct {
	path string
	f    *RulesFile
	logs *observer.ObservedLogs

	mu      sync.Mutex
	applied []*Rules
}

// newWatchedFile writes doc to a file and makes its RulesFile, which
// checks it every few milliseconds once started. When the test ends the
// RulesFile is closed and no goroutine may be left.
func newWatchedFile(t *testing.T, doc string, mtime time.Time) *watchedFile {
	t.Helper()
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // the last cleanup
	w := &watchedFile{path: filepath.Join(t.TempDir(), "rules.yaml")}
	writeRules(t, w.path, doc, mtime)
	core, logs := observer.New(zapcore.DebugLevel)
	w.logs = logs
	f, err := NewRulesFile(RulesFileConfig{Path: w.path, Interval: 5 * time.Millisecond, Logger: zap.New(core), Apply: w.apply})
	if err != nil {
		t.Fatal(err)
	}
	w.f = f
	t.Cleanup(func() { f.Close() })
	return w
}

func (w *watchedFile) apply(r *Rules) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.applied = append(w.applied, r)
}

// defaults returns the default subset of ORDERS in each rules applied.
func (w *watchedFile) defaults() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, r := range w.applied {
		doc, _ := r.App("ORDERS")
		out = append(out, doc.Default)
	}
	return out
}

// waitApplied waits for the rules applied to have these defaults.
func (w *watchedFile) waitApplied(t *testing.T, want ...string) {
	t.Helper()
	testkit.Eventually(t, 5*time.Second, fmt.Sprintf("rules applied with defaults %q", want), func() bool {
		return joined(w.defaults()) == joined(want)
	})
	if doc, _ := w.f.Rules().App("ORDERS"); doc.Default != want[len(want)-1] {
		t.Fatalf("Rules() has default %q, want %q", doc.Default, want[len(want)-1])
	}
}

func joined(s []string) string { return strings.Join(s, " | ") }

// writeRules writes doc to path, dated mtime unless it is zero.
func writeRules(t *testing.T, path, doc string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// renameRules writes doc to a temporary file beside path, dated mtime
// unless it is zero, and renames it over path.
func renameRules(t *testing.T, path, doc string, mtime time.Time) {
	t.Helper()
	tmp := path + ".tmp"
	writeRules(t, tmp, doc, mtime)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A file written over in place is read again and its rules applied.
func TestRulesFileRereadsAWrite(t *testing.T) {
	w := newWatchedFile(t, versionRules("2.0"), time.Time{})
	w.waitApplied(t, "version=2.0")
	w.f.Start()
	writeRules(t, w.path, versionRules("2.1"), time.Time{}) // as large as before
	w.waitApplied(t, "version=2.0", "version=2.1")
	if e := w.logs.FilterMessage("traffic rules applied").All(); len(e) != 1 || e[0].ContextMap()["file"] != w.path || e[0].Level != zapcore.InfoLevel {
		t.Errorf("logged %+v, want one Info line naming the file", e)
	}
}

// A file replaced by a rename is read again, though the new one is as
// large as the old and has its modification time: it is another file.
func TestRulesFileRereadsARenameOver(t *testing.T) {
	old := time.Now().Add(-time.Hour).Truncate(time.Second) // not recent: the time and size alone would tell no change
	w := newWatchedFile(t, versionRules("2.0"), old)
	w.f.Start()
	renameRules(t, w.path, versionRules("2.1"), old)
	w.waitApplied(t, "version=2.0", "version=2.1")
}

// A document that does not parse is logged with its file and line, and
// the rules in force stay; so they do while the path has no file. Once
// the file is fixed, its rules are applied.
func TestRulesFileKeepsTheRulesOfABrokenDocument(t *testing.T) {
	w := newWatchedFile(t, versionRules("2.0"), time.Time{})
	w.f.Start()
	writeRules(t, w.path, brokenRules, time.Time{})
	testkit.Eventually(t, 5*time.Second, "the broken document logged", func() bool {
		return w.logs.FilterMessage("traffic rules refused; the rules in force stay").Len() > 0
	})
	e := w.logs.FilterMessage("traffic rules refused; the rules in force stay").All()[0]
	if msg, _ := e.ContextMap()["error"].(string); e.Level != zapcore.ErrorLevel || !strings.HasPrefix(msg, w.path+":4: ") || !strings.Contains(msg, `"sometimes" is not default, any or none`) {
		t.Errorf("logged %v %q, want an Error naming %s:4 and the reason", e.Level, msg, w.path)
	}
	if got := w.defaults(); len(got) != 1 {
		t.Fatalf("applied %q after a broken document", got)
	}

	if err := os.Remove(w.path); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 5*time.Second, "the missing file logged", func() bool {
		return w.logs.FilterMessage("cannot read the traffic rules file; the rules in force stay, and it is tried again").Len() > 0
	})
	renameRules(t, w.path, versionRules("2.1"), time.Time{})
	w.waitApplied(t, "version=2.0", "version=2.1")
	if n := w.logs.FilterMessage("cannot read the traffic rules file; the rules in force stay, and it is tried again").Len(); n != 1 {
		t.Errorf("the missing file logged %d times, want once", n)
	}
}

// The checks one by one: a second write with the first one's time and
// size is seen while the first is recent, and applied at the check after
// the one that saw it; a document read again unchanged, or touched, is
// not applied again; an empty file is not applied.
func TestRulesFileChecks(t *testing.T) {
	w := newWatchedFile(t, versionRules("2.0"), time.Time{}) // not started: the test checks
	st, err := os.Stat(w.path)
	if err != nil {
		t.Fatal(err)
	}
	writeRules(t, w.path, versionRules("2.1"), st.ModTime()) // in the same tick, as it were
	w.f.check()
	if got := w.defaults(); joined(got) != "version=2.0" {
		t.Fatalf("a write applied at the check that saw it: %q", got)
	}
	w.f.check()
	if got := w.defaults(); joined(got) != "version=2.0 | version=2.1" {
		t.Fatalf("a write in the same tick: applied %q", got)
	}
	w.f.check()
	writeRules(t, w.path, versionRules("2.1"), time.Now().Add(-time.Hour)) // touched
	w.f.check()
	w.f.check()
	if got := w.defaults(); len(got) != 2 {
		t.Fatalf("the same document applied again: %q", got)
	}
	writeRules(t, w.path, "", time.Time{})
	w.f.check()
	w.f.check()
	if got := w.defaults(); len(got) != 2 {
		t.Fatalf("an empty file applied: %q", got)
	}
	if n := w.logs.FilterLevelExact(zapcore.WarnLevel).Len(); n != 1 {
		t.Errorf("the empty file logged %d times, want once", n)
	}
	writeRules(t, w.path, "apps: {}\n", time.Time{})
	w.f.check()
	w.f.check()
	if got := w.defaults(); len(got) != 3 || len(w.f.Rules().Apps()) != 0 {
		t.Fatalf("apps: {} not applied: %q, %v", got, w.f.Rules().Apps())
	}
	// Close without Start, twice, and Start after Close, which does
	// nothing.
	w.f.Close()
	w.f.Close()
	w.f.Start()
}

// A file that does not parse, or is missing, fails NewRulesFile with a
// RulesError, and nothing is applied.
func TestNewRulesFileRefusesABadFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeRules(t, bad, brokenRules, time.Time{})
	for path, want := range map[string]string{bad: bad + ":4: ", filepath.Join(dir, "missing.yaml"): filepath.Join(dir, "missing.yaml") + ": "} {
		_, err := NewRulesFile(RulesFileConfig{Path: path, Apply: func(*Rules) { t.Error("applied") }})
		var re *RulesError
		if !errors.As(err, &re) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want a RulesError starting %q", path, err, want)
		}
	}
	if _, err := NewRulesFile(RulesFileConfig{Path: bad}); err == nil {
		t.Error("no Apply accepted")
	}
}

// A file rewritten in place slowly is not applied while a part of it is
// written, though the part parses (it ends on a line): only once a
// check finds it as the previous check did. Issue 44's case: the prefix
// held ORDERS alone, and PAYMENTS lost its rules meanwhile.
func TestRulesFileNeverAppliesAHalfWrittenFile(t *testing.T) {
	both := func(v string) string {
		return versionRules(v) + "  payments:\n    default: {version: \"1.0\"}\n"
	}
	w := newWatchedFile(t, both("2.0"), time.Time{}) // not started: the test ticks
	prefix := versionRules("2.1")                    // a document of its own: ORDERS alone
	if _, err := ParseRules("prefix", []byte(prefix)); err != nil {
		t.Fatal(err)
	}
	writeRules(t, w.path, prefix, time.Time{})
	w.f.check()
	appendRules(t, w.path, both("2.1")[len(prefix):])
	w.f.check()
	if got := w.defaults(); joined(got) != "version=2.0" {
		t.Fatalf("applied %q while the file was being written", got)
	}
	w.f.check() // as the previous check found it: written
	if got := w.defaults(); joined(got) != "version=2.0 | version=2.1" {
		t.Fatalf("applied %q, want the whole document once", got)
	}
	if doc, ok := w.f.Rules().App("PAYMENTS"); !ok || doc.Default != "version=1.0" {
		t.Errorf("PAYMENTS in the rules applied: %+v, %v", doc, ok)
	}
	w.f.check()
	if got := w.defaults(); len(got) != 2 {
		t.Errorf("applied again: %q", got)
	}
}

// appendRules appends text to the file at path.
func appendRules(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
